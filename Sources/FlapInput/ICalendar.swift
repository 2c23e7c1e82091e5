import Foundation

/// An iCalendar feed (RFC 5545) as a board needs it: its events — summary, location, start, end
/// or duration, all-day or timed (UTC, floating, or in an IANA `TZID`), the recurrence rule, its
/// exceptions (`EXDATE`) and moved or cancelled occurrences (`RECURRENCE-ID`). Read within
/// limits: a feed that passes one is refused with a sentence that says which; an event that
/// cannot be read is left out and named in `problems`.
public struct ICalendar: Sendable {
    public var events: [Event]
    /// What was left out, and why (at most `Limits.maxProblems`).
    public var problems: [String]

    public struct Limits: Sendable {
        public var maxBytes = 4 << 20
        public var maxLineBytes = 16 << 10
        public var maxEvents = 5_000
        public var maxDepth = 8
        public var maxExdates = 1_000
        public static let maxProblems = 20
        public init() {}
    }

    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// A date, or a date and time of day, as written, with how its time is to be read.
    public struct Moment: Sendable, Hashable {
        public var year: Int, month: Int, day: Int
        public var hour = 0, minute = 0, second = 0
        /// A date without a time (an all-day event).
        public var isDate: Bool
        public var zone: Zone
        public enum Zone: Sendable, Hashable {
            case utc, floating
            case named(String)
        }
    }

    public struct Event: Sendable {
        public var uid: String?
        public var summary: String
        public var location: String?
        public var start: Moment
        public var end: Moment?
        /// Seconds (from `DURATION`), when there is no `end`.
        public var duration: Double?
        public var rule: RecurrenceRule?
        public var exdates: [Moment] = []
        /// For an occurrence moved or changed: the start of the occurrence it replaces.
        public var recurrenceID: Moment?
        public var cancelled = false
    }

    /// Reads a feed.
    public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(Problem) -> ICalendar {
        guard bytes.count <= limits.maxBytes else { throw Problem(description: "larger than \(limits.maxBytes / 1024) KiB") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Problem(description: "not UTF-8") }
        var calendar = ICalendar(events: [], problems: [])
        var stack: [String] = []
        var current: [(name: String, params: [String: String], value: String)]?
        var sawCalendar = false
        var lineNumber = 0
        for (number, line) in try unfolded(text, limits: limits) {
            lineNumber = number
            guard let (name, params, value) = contentLine(line) else {
                throw Problem(description: "line \(number): not a content line NAME[;PARAM=…]:VALUE")
            }
            switch name {
            case "BEGIN":
                stack.append(value.uppercased())
                guard stack.count <= limits.maxDepth else { throw Problem(description: "line \(number): components nested deeper than \(limits.maxDepth)") }
                if stack.count == 1 {
                    guard stack[0] == "VCALENDAR" else { throw Problem(description: "line \(number): expected BEGIN:VCALENDAR, found BEGIN:\(value.prefix(40))") }
                    sawCalendar = true
                }
                if stack.last == "VEVENT", stack.count == 2 { current = [] }
            case "END":
                guard stack.last == value.uppercased() else {
                    throw Problem(description: "line \(number): END:\(value.prefix(40)) closes \(stack.last.map { "BEGIN:\($0)" } ?? "nothing")")
                }
                if stack.count == 2, stack.last == "VEVENT", let props = current {
                    guard calendar.events.count < limits.maxEvents else { throw Problem(description: "more than \(limits.maxEvents) events") }
                    do throws(Problem) { calendar.events.append(try event(props, limits: limits)) } catch {
                        if calendar.problems.count < Limits.maxProblems { calendar.problems.append("the event ending at line \(number): \(error)") }
                    }
                    current = nil
                }
                stack.removeLast()
            default:
                // Only an event's own properties (not those of its alarms).
                if stack.count == 2, stack.last == "VEVENT" { current?.append((name, params, value)) }
            }
        }
        guard sawCalendar else { throw Problem(description: "no BEGIN:VCALENDAR: not an iCalendar feed") }
        guard stack.isEmpty else { throw Problem(description: "line \(lineNumber): BEGIN:\(stack.last!) is never ended") }
        return calendar
    }

    /// The feed's lines with their folds undone (a line that begins with a space or a tab goes on
    /// the one before), each with the number of its first line.
    static func unfolded(_ text: String, limits: Limits) throws(Problem) -> [(Int, String)] {
        var lines: [(Int, String)] = []
        var number = 0
        // "\r\n" is one Character in Swift: split on newlines as Characters.
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            let line = Substring(raw)
            if let first = line.first, first == " " || first == "\t", !lines.isEmpty {
                lines[lines.count - 1].1 += line.dropFirst()
            } else if !line.isEmpty {
                lines.append((number, String(line)))
            }
            if let last = lines.last, last.1.utf8.count > limits.maxLineBytes {
                throw Problem(description: "line \(last.0): longer than \(limits.maxLineBytes / 1024) KiB unfolded")
            }
        }
        return lines
    }

    /// NAME;PARAM=VALUE;PARAM="QUOTED":VALUE → (NAME, params, VALUE); names upper-cased.
    static func contentLine(_ line: String) -> (String, [String: String], String)? {
        var name = "", params: [String: String] = [:]
        var i = line.startIndex
        while i < line.endIndex, line[i] != ";", line[i] != ":" { name.append(line[i]); i = line.index(after: i) }
        guard !name.isEmpty, i < line.endIndex else { return nil }
        while line[i] == ";" {
            i = line.index(after: i)
            var key = ""
            while i < line.endIndex, line[i] != "=", line[i] != ":", line[i] != ";" { key.append(line[i]); i = line.index(after: i) }
            guard i < line.endIndex, line[i] == "=" else { return nil }
            i = line.index(after: i)
            var value = "", quoted = false
            while i < line.endIndex, quoted || (line[i] != ";" && line[i] != ":") {
                if line[i] == "\"" { quoted.toggle() } else { value.append(line[i]) }
                i = line.index(after: i)
            }
            guard i < line.endIndex else { return nil }
            params[key.uppercased()] = value
        }
        guard line[i] == ":" else { return nil }
        return (name.uppercased(), params, String(line[line.index(after: i)...]))
    }

    /// TEXT values: `\n`, `\,`, `\;`, `\\`.
    static func unescaped(_ s: String) -> String {
        guard s.contains("\\") else { return s }
        var out = "", escaping = false
        for c in s {
            if escaping {
                out.append(c == "n" || c == "N" ? "\n" : c)
                escaping = false
            } else if c == "\\" { escaping = true } else { out.append(c) }
        }
        return out
    }

    private static func event(_ props: [(name: String, params: [String: String], value: String)], limits: Limits) throws(Problem) -> Event {
        func first(_ name: String) -> (params: [String: String], value: String)? {
            props.first { $0.name == name }.map { ($0.params, $0.value) }
        }
        guard let dtstart = first("DTSTART") else { throw Problem(description: "no DTSTART") }
        let start = try moment(dtstart.value, dtstart.params, what: "DTSTART")
        var e = Event(uid: first("UID")?.value, summary: unescaped(first("SUMMARY")?.value ?? ""), location: first("LOCATION").map { unescaped($0.value) },
                      start: start)
        if let end = first("DTEND") { e.end = try moment(end.value, end.params, what: "DTEND") }
        else if let d = first("DURATION") {
            guard let seconds = duration(d.value) else { throw Problem(description: "DURATION '\(d.value.prefix(40))' is not a duration such as PT1H30M") }
            e.duration = seconds
        }
        if let r = first("RRULE") { e.rule = try RecurrenceRule(r.value, start: start) }
        for p in props where p.name == "EXDATE" {
            for v in p.value.split(separator: ",") {
                guard e.exdates.count < limits.maxExdates else { throw Problem(description: "more than \(limits.maxExdates) EXDATEs") }
                e.exdates.append(try moment(String(v), p.params, what: "EXDATE"))
            }
        }
        if let r = first("RECURRENCE-ID") { e.recurrenceID = try moment(r.value, r.params, what: "RECURRENCE-ID") }
        e.cancelled = first("STATUS")?.value.uppercased() == "CANCELLED"
        return e
    }

    /// `20261224`, `20261224T073000`, `20261224T063000Z`, with `TZID=` and `VALUE=DATE`.
    static func moment(_ text: String, _ params: [String: String], what: String) throws(Problem) -> Moment {
        let digits = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= digits.count else { return nil }
            var n = 0
            for d in digits[from..<(from + count)] {
                guard (0x30...0x39).contains(d) else { return nil }
                n = n * 10 + Int(d - 0x30)
            }
            return n
        }
        let bad = Problem(description: "\(what) '\(text.prefix(40))' is not a date YYYYMMDD or a time YYYYMMDDTHHMMSS[Z]")
        guard let y = number(0, 4), let mo = number(4, 2), let d = number(6, 2), (1...12).contains(mo), (1...31).contains(d), y >= 1 else { throw bad }
        if digits.count == 8 { return Moment(year: y, month: mo, day: d, isDate: true, zone: .floating) }
        guard digits.count == 15 || (digits.count == 16 && digits[15] == UInt8(ascii: "Z")), digits[8] == UInt8(ascii: "T"),
              let h = number(9, 2), let mi = number(11, 2), let s = number(13, 2), h < 24, mi < 60, s <= 60 else { throw bad }
        let zone: Moment.Zone = digits.count == 16 ? .utc : params["TZID"].map { .named(String($0.prefix(64))) } ?? .floating
        return Moment(year: y, month: mo, day: d, hour: h, minute: mi, second: min(s, 59), isDate: false, zone: zone)
    }

    /// `P1D`, `PT1H30M`, `P2W`, `-PT15M` in seconds.
    static func duration(_ text: String) -> Double? {
        var s = Substring(text), sign = 1.0
        if s.hasPrefix("-") { sign = -1; s = s.dropFirst() } else if s.hasPrefix("+") { s = s.dropFirst() }
        guard s.hasPrefix("P"), s.count <= 32 else { return nil }
        s = s.dropFirst()
        var total = 0.0, number = "", inTime = false, any = false
        for c in s {
            if c == "T" { inTime = true; continue }
            if c.isASCII, c.isNumber { number.append(c); continue }
            guard let n = Double(number) else { return nil }
            switch (c, inTime) {
            case ("W", false): total += n * 604_800
            case ("D", false): total += n * 86_400
            case ("H", true): total += n * 3600
            case ("M", true): total += n * 60
            case ("S", true): total += n
            default: return nil
            }
            number = ""; any = true
        }
        return any && number.isEmpty ? sign * total : nil
    }
}
