import Foundation

/// A schedule entry's text with its props filled in at the instant it speaks. Props are written
/// `{{name}}` or `{{name:argument}}` (the `{NN}` character codes stay as they are):
///
/// - `{{time}}`, `{{time:FORMAT}}` — the time of day, "HH:mm" unless a format says otherwise;
/// - `{{date}}`, `{{date:FORMAT}}` — the date, "EEE d MMM" unless a format says otherwise
///   (FORMAT: Unicode date patterns, English names: `EEEE d MMMM yyyy`);
/// - `{{days_until:YYYY-MM-DD}}` — whole days from today to that date (0 on the day, negative
///   after it); `{{days_until:MM-DD}}` — to the next such date (0 on the day itself);
/// - `{{days_since:YYYY-MM-DD}}` — whole days since that date.
public struct ScheduleText: Sendable, Hashable {
    /// What a template may hold.
    public static let maxCharacters = 2_000
    public static let maxProps = 64
    public static let maxFormat = 64

    private enum Piece: Sendable, Hashable {
        case literal(String)
        case time(String), date(String)
        case daysUntil(ScheduleWhen.Day), daysSince(ScheduleWhen.Day)
    }
    private let pieces: [Piece]
    public let template: String

    /// Reads a template; throws a sentence naming the first thing wrong in it.
    public init(_ template: String) throws(Problem) {
        self.template = template
        guard template.count <= Self.maxCharacters else { throw Problem("\(template.count) characters; at most \(Self.maxCharacters)") }
        var pieces: [Piece] = []
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { pieces.append(.literal(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else { throw Problem("'{{' without its '}}'") }
            pieces.append(try Self.prop(String(rest[open.upperBound..<close.lowerBound])))
            guard pieces.count <= 2 * Self.maxProps else { throw Problem("more than \(Self.maxProps) props") }
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { pieces.append(.literal(String(rest))) }
        self.pieces = pieces
    }

    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
    }

    private static func prop(_ inside: String) throws(Problem) -> Piece {
        let name = inside.prefix { $0 != ":" }.trimmingCharacters(in: .whitespaces)
        let argument = inside.contains(":") ? String(inside[inside.index(after: inside.firstIndex(of: ":")!)...]) : nil
        guard (argument?.count ?? 0) <= maxFormat else { throw Problem("the argument of {{\(name)}} is longer than \(maxFormat) characters") }
        switch name {
        case "time": return .time(argument ?? "HH:mm")
        case "date": return .date(argument ?? "EEE d MMM")
        case "days_until", "days_since":
            guard let a = argument, let day = ScheduleWhen.Day(a.trimmingCharacters(in: .whitespaces)) else {
                throw Problem("{{\(name):…}} takes a date YYYY-MM-DD\(name == "days_until" ? " or MM-DD" : "")")
            }
            if name == "days_since", day.year == nil { throw Problem("{{days_since:…}} takes a date with its year, YYYY-MM-DD") }
            return name == "days_until" ? .daysUntil(day) : .daysSince(day)
        default:
            throw Problem("unknown prop {{\(inside.prefix(40))}} (props: time, date, days_until, days_since)")
        }
    }

    /// The text at instant `t` (seconds since 1970) in `calendar`'s time zone.
    public func render(at t: Double, in calendar: Calendar) -> String {
        let date = Date(timeIntervalSince1970: t)
        return pieces.map { piece -> String in
            switch piece {
            case .literal(let s): s
            case .time(let f), .date(let f): Self.format(date, f, calendar)
            case .daysUntil(let d): String(Self.days(from: date, to: d, calendar))
            case .daysSince(let d): String(-Self.days(from: date, to: d, calendar))
            }
        }.joined()
    }

    private static func format(_ date: Date, _ pattern: String, _ calendar: Calendar) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = calendar
        f.timeZone = calendar.timeZone
        f.dateFormat = pattern
        return f.string(from: date)
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
