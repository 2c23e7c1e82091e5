import FlapClock
import Foundation

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
