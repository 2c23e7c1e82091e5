import FlapMessages
import Foundation
import Yams

extension ConfigLoader {
    /// What a schedule may hold.
    static let maxScheduleEntries = 64
    static let maxTimesPerEntry = 96
    static let maxDatesPerEntry = 366

    /// `time_zone:` — an IANA name such as Europe/Berlin; the machine's zone when absent.
    static func timeZone(_ root: ConfigNode) -> TimeZone {
        guard let name = root.string("time_zone") else { return .current }
        guard name.count <= 64, let zone = TimeZone(identifier: name) else {
            root.issues.add("time_zone", root.value("time_zone"), "'\(name.prefix(64))' is not a time zone (an IANA name such as Europe/Berlin)")
            return .current
        }
        return zone
    }

    /// `schedule: [{id, at | every_minutes (from, to), days, dates, text, for_seconds, priority,
    /// min_hold_seconds}]`: the board's own senders.
    static func schedule(_ root: ConfigNode) -> [ScheduleEntry] {
        guard let list = root.value("schedule") else { return [] }
        guard let items = list.sequence else { root.issues.add("schedule", list, "expected a list of schedule entries"); return [] }
        guard items.count <= maxScheduleEntries else {
            root.issues.add("schedule", list, "\(items.count) entries; at most \(maxScheduleEntries)"); return []
        }
        var entries: [ScheduleEntry] = []
        var ids: Set<String> = []
        for (i, item) in items.enumerated() {
            let node = ConfigNode(item, path: "schedule[\(i)]", issues: root.issues)
            if let id = item["id"]?.string, !ids.insert(id.lowercased()).inserted {
                node.issues.add(node.sub("id"), item["id"], "'\(id.prefix(40))' names another entry too")
            }
            if let entry = scheduleEntry(node) { entries.append(entry) }
        }
        return entries
    }

    private static func scheduleEntry(_ node: ConfigNode) -> ScheduleEntry? {
        let id = node.string("id")
        if id == nil { node.issues.add(node.sub("id"), node.node, "missing (a name for the entry, which zones list: morning)") }
        if let id, id.isEmpty || id.count > 32 || !id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
            node.issues.add(node.sub("id"), node.value("id"), "'\(id.prefix(40))' is not a name of 1 to 32 letters, digits, - and _")
        }
        let minutes = scheduleMinutes(node)
        let weekdays = scheduleWeekdays(node)
        let dates = scheduleDates(node)
        var text: ScheduleText?
        if let t = node.string("text") {
            do throws(ScheduleText.Problem) { text = try ScheduleText(t) } catch {
                node.issues.add(node.sub("text"), node.value("text"), error.description)
            }
        } else {
            node.issues.add(node.sub("text"), node.node, "missing (what the entry shows: \"GOOD MORNING {{date}}\")")
        }
        let range = InboxMessage.durationRange
        let duration = node.value("for_seconds") == nil ? nil
            : Double(node.int("for_seconds", default: 60, in: Int(range.lowerBound)...Int(range.upperBound)))
        let priority = node.choice("priority", default: InboxMessage.Priority.under)
        let hold = node.value("min_hold_seconds") == nil ? nil : Double(node.int("min_hold_seconds", default: 0, in: 0...3600))
        node.rejectUnknownKeys()
        guard let id, let minutes, let text else { return nil }
        return ScheduleEntry(id: id, when: ScheduleWhen(minutes: minutes, weekdays: weekdays, dates: dates), text: text,
                             duration: duration, priority: priority, holdSeconds: hold)
    }

    /// `at: "07:00"` or a list of such; or `every_minutes: N`, within `from` … `to` (both
    /// included; all day when absent).
    private static func scheduleMinutes(_ node: ConfigNode) -> [Int]? {
        let at = node.value("at"), every = node.value("every_minutes")
        switch (at, every) {
        case (nil, nil):
            node.issues.add(node.sub("at"), node.node, "missing (give at: \"07:30\" or a list of times, or every_minutes: 15)")
            return nil
        case (.some, .some):
            node.issues.add(node.sub("every_minutes"), every, "give at or every_minutes, not both")
            return nil
        case (let at?, nil):
            for key in ["from", "to"] where node.value(key) != nil {
                node.issues.add(node.sub(key), node.value(key), "\(key) is the span of every_minutes; with at, list the times")
            }
            let items = at.sequence ?? [at]
            guard items.count <= maxTimesPerEntry else { node.issues.add(node.sub("at"), at, "\(items.count) times; at most \(maxTimesPerEntry)"); return nil }
            var minutes: [Int] = []
            for (k, item) in items.enumerated() {
                let path = at.sequence == nil ? node.sub("at") : node.sub("at[\(k)]")
                guard let m = item.string.flatMap(minuteOfDay) else { node.issues.add(path, item, "\(node.show(item)) is not a time of day HH:MM"); return nil }
                minutes.append(m)
            }
            return minutes
        case (nil, .some):
            let step = node.int("every_minutes", default: 60, in: 1...1440)
            let from = node.value("from") == nil ? 0 : timeOfDay(node, "from") ?? 0
            let to = node.value("to") == nil ? 1439 : timeOfDay(node, "to") ?? 1439
            guard from <= to else {
                node.issues.add(node.sub("to"), node.value("to"), "ends before from (a span across midnight: give two entries)"); return nil
            }
            return ScheduleWhen.every(step, from: from, to: to)
        }
    }

    private static func minuteOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let h = Int(parts[0]), let m = Int(parts[1]),
              (0..<24).contains(h), (0..<60).contains(m) else { return nil }
        return h * 60 + m
    }

    static let weekdayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// `days: [mon, tue, …]`; every day when absent.
    private static func scheduleWeekdays(_ node: ConfigNode) -> Set<Int>? {
        guard let v = node.value("days") else { return nil }
        let items = v.sequence ?? [v]
        var days: Set<Int> = []
        for item in items.prefix(8) {
            guard let name = item.string?.lowercased().prefix(3), let i = weekdayNames.firstIndex(of: String(name)),
                  let full = item.string, full.count == 3 || ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"][i] == full.lowercased() else {
                node.issues.add(node.sub("days"), item, "\(node.show(item)) is not a weekday (mon, tue, wed, thu, fri, sat, sun)"); return nil
            }
            days.insert(i + 1)
        }
        if items.isEmpty || items.count > 7 { node.issues.add(node.sub("days"), v, "expected 1 to 7 weekdays"); return nil }
        return days
    }

    /// `dates: ["12-24", "2026-12-31"]`; every date when absent.
    private static func scheduleDates(_ node: ConfigNode) -> [ScheduleWhen.Day]? {
        guard let v = node.value("dates") else { return nil }
        let items = v.sequence ?? [v]
        guard !items.isEmpty, items.count <= maxDatesPerEntry else {
            node.issues.add(node.sub("dates"), v, "expected 1 to \(maxDatesPerEntry) dates"); return nil
        }
        var days: [ScheduleWhen.Day] = []
        for item in items {
            guard let day = item.string.flatMap(ScheduleWhen.Day.init) else {
                node.issues.add(node.sub("dates"), item, "\(node.show(item)) is not a date MM-DD (every year) or YYYY-MM-DD"); return nil
            }
            days.append(day)
        }
        return days
    }
}
