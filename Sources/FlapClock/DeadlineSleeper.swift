/// Lands on absolute deadlines: sleeps with `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to
/// a little before the deadline — by as much as this machine's recent wake-ups have overslept,
/// at most `maxLead` — then spins on the clock for the rest. A wake-up from an idle CPU can take
/// a few hundred microseconds on one machine and ten on another; the lead follows what this one
/// does (it rises to the worst oversleep seen and decays by 1/16 each wake), so the spin costs
/// only as much CPU as the machine's wake-ups make necessary. `maxLead` 0: sleep only.
///
/// Spin only on a SCHED_FIFO thread: a normal-priority thread that spins on a contended CPU
/// spends the scheduler's credit it would have woken with, and then wakes behind the threads it
/// competes with (measured: p99 several milliseconds, against a few hundred microseconds asleep).
public struct DeadlineSleeper: Sendable {
    /// Most the sleeper spins before a deadline, in nanoseconds.
    public let maxLead: Int64
    /// How far before the next deadline it wakes now, in nanoseconds.
    public private(set) var lead: Int64
    /// Total time spent spinning, in nanoseconds.
    public private(set) var spun: Int64 = 0
    /// Added to an observed oversleep, for the wake-ups that go a little further.
    static let margin: Int64 = 20_000

    public init(maxLead: Int64) {
        self.maxLead = max(0, maxLead)
        self.lead = min(self.maxLead, 50_000)
    }

    /// Returns at `deadline` or as soon after as the machine allows, and the instant it returned.
    @discardableResult
    public mutating func sleep(until deadline: Int64) -> Int64 {
        let target = deadline - lead
        var now = MonotonicClock.now()
        if target > now {
            MonotonicClock.sleep(until: target)
            now = MonotonicClock.now()
            if maxLead > 0 { learn(oversleep: now - target) }
        }
        guard now < deadline else { return now }
        let spinStart = now
        while now < deadline { now = MonotonicClock.now() }
        spun += now - spinStart
        return now
    }

    mutating func learn(oversleep: Int64) {
        let decayed = lead - lead / 16
        lead = min(maxLead, max(decayed, oversleep + Self.margin))
    }
}
