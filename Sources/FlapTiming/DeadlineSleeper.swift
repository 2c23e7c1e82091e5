import CRealtime

/// Lands on absolute deadlines: sleeps with `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to
/// a little before the deadline — by as much as this machine's recent wake-ups have overslept,
/// at most `maxLead` — then spins on the clock for the rest. A wake-up from an idle CPU can take
/// a few hundred microseconds on one machine and ten on another; the lead follows what this one
/// does (it rises to the worst oversleep seen and decays by 1/16 each wake), so the spin costs
/// only as much CPU as the machine's wake-ups make necessary.
///
/// Spinning pays only while the CPU is free. A normal-priority thread that spins on a contended
/// CPU spends the scheduler's credit it would have woken with, and then waits behind the threads
/// it competes with; so once the thread has waited for a CPU (runnable, not running) for more
/// than `contended` around a wake-up, the sleeper sleeps to the next few deadlines without
/// spinning, then tries again — 16 deadlines at first, twice as many each time the CPU is
/// contended again (at most 1024), one fewer for each spin that found a CPU at hand. A passing
/// disturbance costs little; a busy machine soon gets a sleeper that rarely spins. A SCHED_FIFO
/// thread is not made to wait by the threads it spins against, so it does not back off (its
/// waits are CPUs waking from idle). `maxLead` 0: sleep only.
public struct DeadlineSleeper: Sendable {
    /// Most the sleeper spins before a deadline, in nanoseconds.
    public let maxLead: Int64
    /// How far before the next deadline it wakes now, in nanoseconds.
    public private(set) var lead: Int64
    /// Total time spent spinning, in nanoseconds.
    public private(set) var spun: Int64 = 0
    /// Deadlines still to sleep to without spinning, after the thread was preempted.
    public private(set) var sleepOnly = 0
    /// Times the sleeper stopped spinning for a while because the CPU was contended.
    public private(set) var backoffs = 0
    /// The thread's time waiting for a CPU when it last looked (-1: unknown).
    private var waited: Int64 = -1
    /// Added to an observed oversleep, for the wake-ups that go a little further.
    static let margin: Int64 = 20_000
    /// How many deadlines the next back-off lasts.
    public private(set) var backoffLength = DeadlineSleeper.backoffRange.lowerBound
    /// The shortest and longest back-off, in deadlines.
    static let backoffRange = 16...1024
    /// Waiting this long for a CPU around one wake-up means the CPU is contended.
    static let contended: Int64 = 100_000

    /// Whether it stops spinning for a while when the CPU is contended (normal scheduling).
    public let backsOff: Bool

    public init(maxLead: Int64, backsOff: Bool = true) {
        self.maxLead = max(0, maxLead)
        self.backsOff = backsOff
        self.lead = min(self.maxLead, 50_000)
    }

    /// Returns at `deadline` or as soon after as the machine allows, and the instant it returned.
    @discardableResult
    public mutating func sleep(until deadline: Int64) -> Int64 {
        if maxLead > 0 && backsOff { noticeWaiting(Int64(flap_thread_runqueue_wait())) }
        let spinning = nextSpins()
        let target = spinning ? deadline - lead : deadline
        var now = MonotonicClock.now()
        if target > now {
            MonotonicClock.sleep(until: target)
            now = MonotonicClock.now()
            if spinning { learn(oversleep: now - target) }
        }
        guard now < deadline else { return now }
        let spinStart = now
        while now < deadline { now = MonotonicClock.now() }
        spun += now - spinStart
        return now
    }

    /// Backs off from spinning when, since it last looked, the thread waited for a CPU for more
    /// than `contended` (`total`: all its waiting so far, in nanoseconds; negative: unknown).
    mutating func noticeWaiting(_ total: Int64) {
        defer { waited = total }
        guard total >= 0, waited >= 0, sleepOnly == 0 else { return }
        if total - waited > Self.contended {
            sleepOnly = backoffLength
            backoffs += 1
            backoffLength = min(Self.backoffRange.upperBound, backoffLength * 2)
        } else {
            backoffLength = max(Self.backoffRange.lowerBound, backoffLength - 1)
        }
    }

    /// Whether the sleeper spins to the coming deadline (counting down a back-off).
    mutating func nextSpins() -> Bool {
        if sleepOnly > 0 { sleepOnly -= 1; return false }
        return maxLead > 0
    }

    mutating func learn(oversleep: Int64) {
        let decayed = lead - lead / 16
        lead = min(maxLead, max(decayed, oversleep + Self.margin))
    }
}
