import FlapClock
import Foundation

/// Waits until `done` holds or `seconds` have passed, looking every 2 ms: how the GPIO drivers
/// let what is already planned go out before they stop (a flap is never left half-way).
func drain(seconds: Double, until done: () -> Bool) {
    let end = MonotonicClock.now() + Int64(seconds * 1e9)
    while !done(), MonotonicClock.now() < end { MonotonicClock.sleep(until: MonotonicClock.now() + 2_000_000) }
}

/// A driver thread's wait, with `lock` held: with nothing queued (`next` nil) it waits for a
/// signal; before `next` it sleeps on the clock (`clock_nanosleep`), not the condition, but no
/// longer than 5 ms so that a new plan with an earlier instant is picked up in time. Returns
/// whether `next` is due now.
func reached(_ next: Int64?, lock: NSCondition) -> Bool {
    guard let next else { lock.wait(); return false }
    let now = MonotonicClock.now()
    guard next > now else { return true }
    lock.unlock()
    MonotonicClock.sleep(until: min(next, now + 5_000_000))
    lock.lock()
    return false
}
