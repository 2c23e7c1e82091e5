import FlapClock
import Foundation

/// Waits until `done` holds or `seconds` have passed, looking every 2 ms: how the GPIO drivers
/// let what is already planned go out before they stop (a flap is never left half-way).
func drain(seconds: Double, until done: () -> Bool) {
    let end = MonotonicClock.now() + Int64(seconds * 1e9)
    while !done(), MonotonicClock.now() < end { MonotonicClock.sleep(until: MonotonicClock.now() + 2_000_000) }
}
