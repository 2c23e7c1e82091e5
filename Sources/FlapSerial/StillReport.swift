import Foundation

/// The wait both buses use at start for a report in which no module turns: `ask` is called at
/// once and again every `every` seconds; `report` gives the number of reports seen so far and
/// the newest if no module in it turns. A bus that sends none within `answerWithin` seconds is
/// not waited for further; one whose modules turn, until `stillWithin`. `changed` is broadcast
/// by the link whenever a report arrives.
func waitForStillReport<R>(changed: NSCondition, every: Double, answerWithin: Double, stillWithin: Double,
                           ask: () -> Void, report: () -> (count: Int, still: R?)) -> R? {
    let begun = Date(), before = report().count
    var asked = Date.distantPast
    changed.lock()
    defer { changed.unlock() }
    while true {
        let (count, still) = report()
        if count > before, let still { return still }
        let limit = begun.addingTimeInterval(count > before ? stillWithin : answerWithin)
        if Date() >= limit { return nil }
        if Date().timeIntervalSince(asked) >= every {
            ask()
            asked = Date()
        }
        _ = changed.wait(until: min(limit, asked.addingTimeInterval(every)))
    }
}
