import FlapMessages
import Foundation
import FlapInput
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
    static func schedule(_ root: ConfigNode, sources: [SourceConfig] = []) -> [ScheduleEntry] {
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
            if let entry = scheduleEntry(node, sources: sources) { entries.append(entry) }
        }
        return entries
    }

    private static func scheduleEntry(_ node: ConfigNode, sources: [SourceConfig]) -> ScheduleEntry? {
        let id = node.string("id")
        if id == nil { node.issues.add(node.sub("id"), node.node, "missing (a name for the entry, which zones list: morning)") }
        if let id, id.isEmpty || id.count > 32 || !id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
            node.issues.add(node.sub("id"), node.value("id"), "'\(id.prefix(40))' is not a name of 1 to 32 letters, digits, - and _")
        }
        let minutes = scheduleMinutes(node)
        let weekdays = scheduleWeekdays(node)
        let dates = scheduleDates(node)
        var content: ScheduleEntry.Content?
        switch (node.string("text"), node.string("vbml")) {
        case (let t?, nil):
            do throws(ScheduleText.Problem) { content = .text(try scheduleText(t, sources: sources)) } catch {
                node.issues.add(node.sub("text"), node.value("text"), error.description)
            }
        case (nil, let v?):
            do throws(ScheduleText.Problem) { content = try scheduleVBML(v, sources: sources) } catch {
                node.issues.add(node.sub("vbml"), node.value("vbml"), error.description)
            }
        case (.some, .some):
            node.issues.add(node.sub("vbml"), node.value("vbml"), "give text or vbml, not both")
        case (nil, nil):
            node.issues.add(node.sub("text"), node.node, "missing (what the entry shows: text: \"GOOD MORNING {{date}}\", or vbml: a VBML document)")
        }
        let range = InboxMessage.durationRange
        let duration = node.value("for_seconds") == nil ? nil
            : Double(node.int("for_seconds", default: 60, in: Int(range.lowerBound)...Int(range.upperBound)))
        let priority = node.choice("priority", default: InboxMessage.Priority.under)
        if priority == .over, duration == nil {
            node.issues.add(node.sub("priority"), node.value("priority"),
                            "over needs for_seconds: a lasting message over people's would cover theirs for 48 h")
        }
        let hold = node.value("min_hold_seconds") == nil ? nil : Double(node.int("min_hold_seconds", default: 0, in: 0...3600))
        let stale = node.choice("when_stale", default: ScheduleEntry.Stale.skip)
        let dwell = node.value("dwell_seconds") == nil ? nil : Double(node.int("dwell_seconds", default: 10, in: 1...86_400))
        node.rejectUnknownKeys()
        guard let id, let minutes, let content else { return nil }
        var entry = ScheduleEntry(id: id, when: ScheduleWhen(minutes: minutes, weekdays: weekdays, dates: dates), content: content,
                                  duration: duration, priority: priority, holdSeconds: hold, whenStale: stale)
        entry.dwellSeconds = dwell
        return entry
    }

    static let maxSources = 16
    static let maxVBMLBytes = 16 * 1024

    /// A text with its props, each source prop's path checked against its source's kind.
    static func scheduleText(_ t: String, sources: [SourceConfig]) throws(ScheduleText.Problem) -> ScheduleText {
        let read = try ScheduleText(t, sources: Set(sources.map(\.id)))
        for p in read.propsOfSources {
            guard let path = p.path, let source = sources.first(where: { $0.id == p.source }) else { continue }
            if source.kind == .ical, !path.hasPrefix("events") {
                throw ScheduleText.Problem("{{\(p.source):\(path.prefix(40))}}: a calendar's paths begin with events (events[0].summary)")
            }
            do throws(JSONPath.Problem) { _ = try JSONPath(path) } catch { throw ScheduleText.Problem("{{\(p.source):…}}: \(error)") }
        }
        return read
    }

    /// `vbml:` — a VBML document as JSON text; each of its `props` that is text is a schedule
    /// text (filled in when the entry speaks), the others stay as written. Rendered once here,
    /// its props as "?", so a document that cannot render is refused now, not at 06:45.
    static func scheduleVBML(_ json: String, sources: [SourceConfig]) throws(ScheduleText.Problem) -> ScheduleEntry.Content {
        guard json.utf8.count <= maxVBMLBytes else { throw ScheduleText.Problem("\(json.utf8.count) bytes; at most \(maxVBMLBytes)") }
        let document: VBMLDocument
        do throws(VBMLDocument.Problem) { document = try VBMLDocument.decode(Data(json.utf8)) } catch {
            throw ScheduleText.Problem("not a VBML document: \(error.description)")
        }
        var props: [String: ScheduleText] = [:]
        var trial = document
        for (name, value) in document.props ?? [:] {
            guard case .string(let s) = value else { continue }
            props[name] = try scheduleText(s, sources: sources)
            trial.props?[name] = .string("?")
        }
        do throws(VBMLDocument.Problem) { _ = try VBML.render(trial, rows: 6, cols: 22) } catch {
            throw ScheduleText.Problem("the VBML document does not render: \(error.description)")
        }
        return .vbml(document, props: props)
    }

    /// `sources: [{id, json | ical, every_minutes, timeout_seconds, max_kib, stale_minutes,
    /// window_hours, count}]`.
    static func sources(_ root: ConfigNode, environment: [String: String] = [:]) -> [SourceConfig] {
        guard let list = root.value("sources") else { return [] }
        guard let items = list.sequence else { root.issues.add("sources", list, "expected a list of sources"); return [] }
        guard items.count <= maxSources else { root.issues.add("sources", list, "\(items.count) sources; at most \(maxSources)"); return [] }
        var sources: [SourceConfig] = []
        for (i, item) in items.enumerated() {
            let node = ConfigNode(item, path: "sources[\(i)]", issues: root.issues)
            let id = node.string("id")
            if id == nil { node.issues.add(node.sub("id"), node.node, "missing (the name props read it by: weather)") }
            let reserved = ["time", "date", "days_until", "days_since", "age"]
            if let id, id.isEmpty || id.count > 32 || reserved.contains(id) || !id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
                node.issues.add(node.sub("id"), node.value("id"), "'\(id.prefix(40))' is not a name of 1 to 32 letters, digits and _ (nor one of \(reserved.joined(separator: ", ")))")
            }
            if let id, sources.contains(where: { $0.id == id }) { node.issues.add(node.sub("id"), node.value("id"), "'\(id)' names another source too") }
            // A URL that holds a key may come from the environment (json_env, ical_env): it is never logged.
            func location(_ key: String) -> String? {
                guard let variable = node.string(key + "_env") else { return node.string(key) }
                if node.value(key) != nil { node.issues.add(node.sub(key + "_env"), node.value(key + "_env"), "give \(key) or \(key)_env, not both") }
                guard let v = environment[variable], !v.isEmpty else {
                    node.issues.add(node.sub(key + "_env"), node.value(key + "_env"), "the environment variable \(variable.prefix(64)) is not set"); return nil
                }
                return v
            }
            let json = location("json"), ical = location("ical")
            let kind: SourceConfig.Kind? = json != nil && ical != nil ? nil : json != nil ? .json : ical != nil ? .ical : nil
            if kind == nil { node.issues.add(node.sub("json"), node.node, "give json: or ical: (a URL or a file's path; or json_env: / ical_env: naming a variable that holds it), one of them") }
            let location = json ?? ical ?? ""
            if location.count > 2048 || (location.contains("://") && !(location.hasPrefix("http://") || location.hasPrefix("https://") || location.hasPrefix("file://"))) {
                node.issues.add(node.sub(kind?.rawValue ?? "json"), node.value(kind?.rawValue ?? "json"), "expected an http://, https:// or file:// URL or a file's path")
            }
            var s = SourceConfig(id: id ?? "", kind: kind ?? .json, location: location)
            s.every = Double(node.int("every_minutes", default: 15, in: 1...1440) * 60)
            s.timeout = Double(node.int("timeout_seconds", default: 10, in: 1...120))
            s.maxBytes = node.int("max_kib", default: 256, in: 1...8192) * 1024
            s.stale = Double(node.int("stale_minutes", default: Int(s.every / 60) * 3, in: 1...10_080) * 60)
            if node.value("window_hours") != nil || node.value("count") != nil, kind == .json {
                node.issues.add(node.sub("window_hours"), node.value("window_hours") ?? node.value("count"), "window_hours and count are a calendar's (ical:)")
            }
            s.windowHours = Double(node.int("window_hours", default: 24, in: 1...24 * 62))
            s.count = node.int("count", default: 3, in: 1...20)
            node.rejectUnknownKeys()
            if id != nil, kind != nil { sources.append(s) }
        }
        return sources
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
