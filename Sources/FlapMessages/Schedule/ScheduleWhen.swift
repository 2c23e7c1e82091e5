import Foundation

/// When a schedule entry speaks: at times of the day (or every N minutes within a span of the
/// day), on some weekdays or dates, read in one time zone. A value: every instant is computed
/// from the calendar passed in, so DST is the calendar's — a time the clock skips that day (02:30
/// when it jumps from 02:00 to 03:00) speaks at the first instant after the jump; a time the clock
/// passes twice (when it goes back) speaks the first time only.
public struct ScheduleWhen: Sendable, Hashable {
    /// The minutes of the day it speaks at, ascending, without repeats.
    public var minutes: [Int]
    /// The weekdays it speaks on (1 = Sunday … 7 = Saturday, as `Calendar` counts); nil: every day.
    public var weekdays: Set<Int>?
    /// The dates it speaks on; nil: every date.
    public var dates: [Day]?

    /// A date of the calendar: with a year, that day only; without, that day every year.
    public struct Day: Sendable, Hashable {
        public var year: Int?
        public var month: Int
        public var day: Int
        public init(year: Int? = nil, month: Int, day: Int) { self.year = year; self.month = month; self.day = day }

        /// "MM-DD" or "YYYY-MM-DD"; nil when it is neither (or no such day: "02-30").
        public init?(_ text: String) {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.allSatisfy({ $0 != nil }) else { return nil }
            let n = parts.map { $0! }
            switch n.count {
            case 2: (year, month, day) = (nil, n[0], n[1])
            case 3 where (1970...9999).contains(n[0]) && text.hasPrefix(String(format: "%04d", n[0])): (year, month, day) = (n[0], n[1], n[2])
            default: return nil
            }
            let longest = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            guard (1...12).contains(month), (1...longest[month - 1]).contains(day) else { return nil }
            if let year, month == 2, day == 29, !(year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) { return nil }
        }

        func matches(_ c: DateComponents) -> Bool {
            c.month == month && c.day == day && (year == nil || c.year == year)
        }
    }

    /// How far a search for the next (or last) time looks, in days: far enough for a yearly date
    /// of 29 February.
    public static let horizonDays = 1462

    public init(minutes: [Int], weekdays: Set<Int>? = nil, dates: [Day]? = nil) {
        self.minutes = Array(Set(minutes.filter { (0..<1440).contains($0) })).sorted()
        self.weekdays = weekdays
        self.dates = dates
    }

    /// Every `step` minutes from `from` to `to` (minutes of the day, both included).
    public static func every(_ step: Int, from: Int = 0, to: Int = 1439) -> [Int] {
        guard step > 0, from <= to else { return [] }
        return Array(stride(from: from, through: to, by: step))
    }

    /// Whether it speaks on the day of these components (year, month, day, weekday).
    func speaks(on c: DateComponents) -> Bool {
        if let weekdays, let w = c.weekday, !weekdays.contains(w) { return false }
        if let dates, !dates.contains(where: { $0.matches(c) }) { return false }
        return true
    }

    /// The first instant after `t` it speaks at (seconds since 1970), nil when none lies within
    /// `horizonDays`.
    public func next(after t: Double, in calendar: Calendar) -> Double? {
        guard !minutes.isEmpty else { return nil }
        var day = calendar.startOfDay(for: Date(timeIntervalSince1970: t))
        for _ in 0...Self.horizonDays {
            if let found = instants(on: day, calendar).first(where: { $0 > t }) { return found }
            guard let following = calendar.date(byAdding: .day, value: 1, to: day) else { return nil }
            day = calendar.startOfDay(for: following)
        }
        return nil
    }

    /// The last instant at or before `t` it spoke at, nil when none lies within `horizonDays`.
    public func last(atOrBefore t: Double, in calendar: Calendar) -> Double? {
        guard !minutes.isEmpty else { return nil }
        var day = calendar.startOfDay(for: Date(timeIntervalSince1970: t))
        for _ in 0...Self.horizonDays {
            if let found = instants(on: day, calendar).last(where: { $0 <= t }) { return found }
            guard let before = calendar.date(byAdding: .day, value: -1, to: day) else { return nil }
            day = calendar.startOfDay(for: before)
        }
        return nil
    }

    /// The instants it speaks at on the day that starts at `start`, ascending.
    func instants(on start: Date, _ calendar: Calendar) -> [Double] {
        let c = calendar.dateComponents([.year, .month, .day, .weekday], from: start)
        guard speaks(on: c), let end = calendar.date(byAdding: .day, value: 1, to: start).map(calendar.startOfDay) else { return [] }
        var out: [Double] = []
        for m in minutes {
            let wanted = DateComponents(hour: m / 60, minute: m % 60, second: 0)
            // Strictly after: a second before the day's start, so 00:00 is found too.
            guard let d = calendar.nextDate(after: start.addingTimeInterval(-1), matching: wanted,
                                            matchingPolicy: .nextTime, repeatedTimePolicy: .first),
                  d < end else { continue }
            let s = d.timeIntervalSince1970
            if out.last.map({ s > $0 }) ?? true { out.append(s) }
        }
        return out
    }
}
