import Foundation

/// A schedule entry's text with its props filled in at the instant it speaks. Props are written
/// `{{name}}` or `{{name:argument}}` (the `{NN}` character codes stay as they are):
///
/// - `{{time}}`, `{{time:FORMAT}}` — the time of day, "HH:mm" unless a format says otherwise;
/// - `{{date}}`, `{{date:FORMAT}}` — the date, "EEE d MMM" unless a format says otherwise
///   (FORMAT: Unicode date patterns, English names: `EEEE d MMMM yyyy`);
/// - `{{days_until:YYYY-MM-DD}}` — whole days from today to that date (0 on the day, negative
///   after it); `{{days_until:MM-DD}}` — to the next such date (0 on the day itself);
/// - `{{days_since:YYYY-MM-DD}}` — whole days since that date;
/// - `{{SOURCE}}`, `{{SOURCE:PATH}}`, `{{SOURCE:PATH|N}}` — a value of the config's source of
///   that id (a JSON path such as `current.temperature_2m`; `|N`: rounded to N decimals); a
///   calendar source's `{{SOURCE}}` is its next events, one per line;
/// - `{{age:SOURCE}}` — how old the source's last good value is ("4 MIN", "2 H", "3 D").
public struct ScheduleText: Sendable, Hashable {
    /// What a template may hold.
    public static let maxCharacters = 2_000
    public static let maxProps = 64
    public static let maxFormat = 64

    private enum Piece: Sendable, Hashable {
        case literal(String)
        case time(String), date(String)
        case daysUntil(ScheduleWhen.Day), daysSince(ScheduleWhen.Day)
        case source(SourceProp)
    }

    /// A prop that reads a source: its value at a path (rounded), or its age.
    public struct SourceProp: Sendable, Hashable {
        public var source: String
        /// A JSON path, as written (checked by whoever reads the source); nil: the whole value.
        public var path: String?
        public var decimals: Int?
        /// The age of the last good value instead of a value.
        public var age: Bool
    }

    /// The sources the text reads, by id.
    public var sources: Set<String> { Set(propsOfSources.map(\.source)) }

    /// Every prop that reads a source, in the order written.
    public var propsOfSources: [SourceProp] {
        pieces.compactMap { if case .source(let p) = $0 { p } else { nil } }
    }
    private let pieces: [Piece]
    public let template: String

    /// Reads a template; throws a sentence naming the first thing wrong in it. `sources`: the ids
    /// of the config's sources, which props may read.
    public init(_ template: String, sources: Set<String> = []) throws(Problem) {
        self.template = template
        guard template.count <= Self.maxCharacters else { throw Problem("\(template.count) characters; at most \(Self.maxCharacters)") }
        var pieces: [Piece] = []
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { pieces.append(.literal(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else { throw Problem("'{{' without its '}}'") }
            pieces.append(try Self.prop(String(rest[open.upperBound..<close.lowerBound]), sources: sources))
            guard pieces.count <= 2 * Self.maxProps else { throw Problem("more than \(Self.maxProps) props") }
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { pieces.append(.literal(String(rest))) }
        self.pieces = pieces
    }

    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(_ d: String) { description = d }
    }

    private static func prop(_ inside: String, sources: Set<String>) throws(Problem) -> Piece {
        let name = inside.prefix { $0 != ":" }.trimmingCharacters(in: .whitespaces)
        let argument = inside.contains(":") ? String(inside[inside.index(after: inside.firstIndex(of: ":")!)...]) : nil
        guard (argument?.count ?? 0) <= (sources.contains(name) ? 256 + 3 : maxFormat) else {
            throw Problem("the argument of {{\(name)}} is too long")
        }
        if sources.contains(name) {
            var path = argument, decimals: Int?
            if let a = argument, let bar = a.lastIndex(of: "|") {
                guard let n = Int(a[a.index(after: bar)...]), (0...6).contains(n) else {
                    throw Problem("{{\(name):…|N}}: N is the number of decimals, 0 to 6")
                }
                decimals = n
                path = String(a[..<bar])
            }
            if path?.isEmpty == true { path = nil }
            return .source(SourceProp(source: name, path: path, decimals: decimals, age: false))
        }
        switch name {
        case "age":
            guard let a = argument?.trimmingCharacters(in: .whitespaces), sources.contains(a) else {
                throw Problem("{{age:…}} takes the id of a source (sources: \(sources.isEmpty ? "none" : sources.sorted().joined(separator: ", ")))")
            }
            return .source(SourceProp(source: a, path: nil, decimals: nil, age: true))
        case "time": return .time(argument ?? "HH:mm")
        case "date": return .date(argument ?? "EEE d MMM")
        case "days_until", "days_since":
            guard let a = argument, let day = ScheduleWhen.Day(a.trimmingCharacters(in: .whitespaces)) else {
                throw Problem("{{\(name):…}} takes a date YYYY-MM-DD\(name == "days_until" ? " or MM-DD" : "")")
            }
            if name == "days_since", day.year == nil { throw Problem("{{days_since:…}} takes a date with its year, YYYY-MM-DD") }
            return name == "days_until" ? .daysUntil(day) : .daysSince(day)
        default:
            let known = ["time", "date", "days_until", "days_since", "age"] + sources.sorted()
            throw Problem("unknown prop {{\(inside.prefix(40))}} (props: \(known.joined(separator: ", ")))")
        }
    }

    /// The text at instant `t` (seconds since 1970) in `calendar`'s time zone; `source` gives a
    /// source prop's text (nil: "?").
    public func render(at t: Double, in calendar: Calendar, source: (SourceProp) -> String? = { _ in nil }) -> String {
        let date = Date(timeIntervalSince1970: t)
        return pieces.map { piece -> String in
            switch piece {
            case .literal(let s): s
            case .time(let f), .date(let f): Self.format(date, f, calendar)
            case .daysUntil(let d): String(Self.days(from: date, to: d, calendar))
            case .daysSince(let d): String(-Self.days(from: date, to: d, calendar))
            case .source(let p): source(p) ?? "?"
            }
        }.joined()
    }

    private static func format(_ date: Date, _ pattern: String, _ calendar: Calendar) -> String {
        DateFormatter.posix(pattern, in: calendar).string(from: date)
    }

    /// Whole days from the day of `date` to `day` (for a yearly day: its next occurrence, today
    /// included).
    static func days(from date: Date, to day: ScheduleWhen.Day, _ calendar: Calendar) -> Int {
        let today = calendar.dateComponents([.year, .month, .day], from: date)
        func count(_ year: Int) -> Int? {
            guard let target = calendar.date(from: DateComponents(year: year, month: day.month, day: day.day, hour: 12)),
                  let from = calendar.date(from: DateComponents(year: today.year, month: today.month, day: today.day, hour: 12)) else { return nil }
            return calendar.dateComponents([.day], from: from, to: target).day
        }
        if let year = day.year { return count(year) ?? 0 }
        let y = today.year ?? 1970
        // The next such day: this year's, or next year's once it has passed (29 Feb: the next leap year).
        for year in y...(y + 8) {
            if let n = count(year), n >= 0, calendar.dateComponents([.month, .day], from: calendar.date(byAdding: .day, value: n, to: date)!).day == day.day { return n }
        }
        return 0
    }
}

extension DateFormatter {
    /// A formatter of a Unicode date pattern in `calendar` (its zone), with English names and
    /// digits whatever the machine's locale: what the schedule, its sources and `flapd preview`
    /// write and read.
    public static func posix(_ pattern: String, in calendar: Calendar) -> DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = calendar
        f.timeZone = calendar.timeZone
        f.dateFormat = pattern
        return f
    }
}
