import Foundation

extension NSCondition {
    /// An output thread's wait, with the condition locked: with nothing queued (`next` nil) it
    /// waits for a signal; before `next` (monotonic ns) it sleeps on the monotonic clock
    /// (`clock_nanosleep`), unlocked, no longer than 5 ms — so a new plan with an earlier instant
    /// is picked up in time, and a step of the wall clock (NTP, a manual `date`) never stretches
    /// a wait, as a wait on a `Date` would. Returns whether `next` is due now; the condition is
    /// locked again on return.
    public func waitForDue(_ next: Int64?) -> Bool {
        guard let next else { wait(); return false }
        let now = MonotonicClock.now()
        guard next > now else { return true }
        unlock()
        MonotonicClock.sleep(until: min(next, now + 5_000_000))
        lock()
        return false
    }
}

extension NSCondition {
    /// A bounded wait for a signal, with the condition locked, whose bound is `deadline` on the
    /// monotonic clock (ns): each wait lasts at most 100 ms of the wall clock, so a step of it
    /// stretches none. Returns whether time is left (the caller checks what it waits for again);
    /// false once the deadline has passed.
    public func wait(untilMonotonic deadline: Int64) -> Bool {
        let left = deadline - MonotonicClock.now()
        guard left > 0 else { return false }
        _ = wait(until: Date(timeIntervalSinceNow: Double(min(left, 100_000_000)) / 1e9))
        return MonotonicClock.now() < deadline
    }
}
