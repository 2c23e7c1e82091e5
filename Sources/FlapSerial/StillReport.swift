import FlapClock
import Foundation

/// How long a bus is waited for at start (`waitForStillReport`): for its first report — a bus that
/// sends none (no display on it, another protocol) is then not waited for further — and for one
/// with every module still. A display answers within milliseconds, but the thread that reads it
/// may wait long for a core on a loaded machine (a Pi at boot): 1 s was passed with the machine
/// starved (`stress-ng --cpu 8` on 2 cores), and a silent bus costs a start these seconds only.
public enum StartReportWait {
    public static let answer = 3.0
    public static let still = 8.0
}

/// The wait both buses use at start for a report in which no module turns: `ask` is called at
/// once and again every `every` seconds; `report` gives the number of reports seen so far and
/// the newest if no module in it turns. A bus that sends none within `answerWithin` seconds is
/// not waited for further; one whose modules turn, until `stillWithin`. `changed` is broadcast
/// by the link whenever a report arrives. Timed on the monotonic clock.
func waitForStillReport<R>(changed: NSCondition, every: Double, answerWithin: Double, stillWithin: Double,
                           ask: () -> Void, report: () -> (count: Int, still: R?)) -> R? {
    let nanos = { (seconds: Double) in Int64(seconds * 1e9) }
    let begun = MonotonicClock.now(), before = report().count
    var asked = Int64.min
    changed.lock()
    defer { changed.unlock() }
    while true {
        let (count, still) = report()
        if count > before, let still { return still }
        let limit = begun + nanos(count > before ? stillWithin : answerWithin)
        let now = MonotonicClock.now()
        if now >= limit { return nil }
        if asked == .min || now - asked >= nanos(every) {
            ask()
            asked = now
        }
        _ = changed.wait(untilMonotonic: min(limit, asked + nanos(every)))
    }
}
