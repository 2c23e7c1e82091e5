import Foundation

extension ICalendar {
    /// One occurrence of an event: what a board shows of it.
    public struct Occurrence: Sendable, Hashable {
        public var summary: String
        public var location: String?
        /// Seconds since 1970.
        public var start: Double
        public var end: Double
        public var allDay: Bool
    }

    /// How many periods of rules are looked at, at most, in one call, over all its events: a rule
    /// that would need more (`COUNT=1000000000` from long ago) ends there, named in `problems`,
    /// and so do the rules after it.
    public static let maxSteps = 200_000

    /// The occurrences that overlap `[from, to)` (an event without length: that start within
    /// it), earliest first, at most `limit`. Floating times and all-day dates are read in `zone`,
    /// as is a `TZID` that is not an IANA name (named in the second result).
    public func occurrences(from: Double, to: Double, zone: TimeZone, limit: Int = 100) -> (occurrences: [Occurrence], problems: [String]) {
        var out: [Occurrence] = []
        var problems: [String] = []
        var budget = Self.maxSteps
        // Occurrences moved or cancelled by an override, per event uid: the instants they replace.
        var overridden: [String: Set<Double>] = [:]
        for e in events where e.recurrenceID != nil {
            let (cal, _) = calendar(e.recurrenceID!, zone)
            overridden[e.uid ?? "", default: []].insert(Self.instant(e.recurrenceID!, cal))
        }
        for e in events {
            let (cal, unknown) = calendar(e.start, zone)
            if let unknown, problems.count < Limits.maxProblems { problems.append("TZID '\(unknown)' is not a time zone this machine knows; read in \(zone.identifier)") }
            if e.cancelled { continue }
            let start = Self.instant(e.start, cal)
            let length = max(0, e.end.map { Self.instant($0, calendar($0, zone).0) - start } ?? e.duration ?? (e.start.isDate ? 86_400 : 0))
            func overlaps(_ s: Double) -> Bool { length > 0 ? s < to && s + length > from : s >= from && s < to }
            func add(_ s: Double) {
                guard overlaps(s) else { return }
                let allDayEnd = e.start.isDate ? Self.allDayEnd(s, length, cal) : s + length
                out.append(Occurrence(summary: e.summary, location: e.location, start: s, end: allDayEnd, allDay: e.start.isDate))
            }
            // EXDATE takes out of the recurrence set, which DTSTART is in even without a rule.
            let skip = Set(e.exdates.map { Self.instant($0, calendar($0, zone).0) }).union(e.recurrenceID == nil ? overridden[e.uid ?? ""] ?? [] : [])
            guard let rule = e.rule, e.recurrenceID == nil else {
                if !skip.contains(start) { add(start) }
                continue
            }
            let before = budget
            let stopped = expand(e, rule, cal, from: from - length, to: to, budget: &budget) { s in if !skip.contains(s) { add(s) } }
            if stopped, problems.count < Limits.maxProblems {
                problems.append("'\(e.summary.prefix(40))': its rule was followed for \(before) periods and no further (at most \(Self.maxSteps) for the whole calendar)")
            }
        }
        out.sort { ($0.start, $0.summary) < ($1.start, $1.summary) }
        return (Array(out.prefix(limit)), problems)
    }

    /// The calendar a moment is read in, and a TZID that is not known (read in `zone` instead).
    func calendar(_ m: Moment, _ zone: TimeZone) -> (Calendar, String?) {
        var cal = Calendar(identifier: .gregorian)
        switch m.zone {
        case .utc: cal.timeZone = TimeZone(identifier: "UTC")!
        case .floating: cal.timeZone = zone
        case .named(let id):
            if let z = TimeZone(identifier: id) { cal.timeZone = z } else { cal.timeZone = zone; return (cal, id) }
        }
        return (cal, nil)
    }

    /// A moment's instant in its calendar: a date at the start of its day.
    static func instant(_ m: Moment, _ cal: Calendar) -> Double {
        let c = DateComponents(year: m.year, month: m.month, day: m.day, hour: m.isDate ? 0 : m.hour, minute: m.isDate ? 0 : m.minute,
                               second: m.isDate ? 0 : m.second)
        return cal.date(from: c)?.timeIntervalSince1970 ?? 0
    }

    /// An all-day occurrence ends at the start of a day: its length in days, kept across DST.
    static func allDayEnd(_ start: Double, _ length: Double, _ cal: Calendar) -> Double {
        let days = Int((length / 86_400).rounded())
        return cal.date(byAdding: .day, value: max(1, days), to: Date(timeIntervalSince1970: start))?.timeIntervalSince1970 ?? start + length
    }

    /// Calls `each` with the start of every occurrence of `e` by `rule` (DTSTART first) that may
    /// overlap `[from, to)`, in order, until COUNT, UNTIL or `to`, each period taken from
    /// `budget`; returns whether the budget stopped it.
    func expand(_ e: Event, _ rule: RecurrenceRule, _ cal: Calendar, from: Double, to: Double, budget: inout Int,
                _ each: (Double) -> Void) -> Bool {
        let s = e.start
        let startDay = CivilDay.days(s.year, s.month, s.day)
        let until = rule.until.map { u -> Double in
            var m = u
            if u.isDate { (m.hour, m.minute, m.second, m.isDate) = (23, 59, 59, false); m.zone = s.zone == .utc ? .floating : s.zone }
            return Self.instant(m, u.zone == .utc ? calendar(u, cal.timeZone).0 : cal)
        }
        func at(_ day: Int) -> Double {
            let d = CivilDay.date(day)
            return Self.instant(Moment(year: d.year, month: d.month, day: d.day, hour: s.hour, minute: s.minute, second: s.second,
                                       isDate: s.isDate, zone: s.zone), cal)
        }
        // Without COUNT, the periods long before the window need not be walked.
        var k = 0
        if rule.count == nil {
            let fromDay = Int(((from - Self.instant(s, cal)) / 86_400).rounded(.down)) + startDay - 2
            let periods: Int
            switch rule.frequency {
            case .daily: periods = (fromDay - startDay) / rule.interval
            case .weekly: periods = (fromDay - startDay) / (7 * rule.interval)
            case .monthly: periods = (fromDay - startDay) / (31 * rule.interval)
            case .yearly: periods = (fromDay - startDay) / (366 * rule.interval)
            }
            k = max(0, periods - 1)
        }
        var emitted = 0
        if k == 0 {
            emitted = 1
            let first = Self.instant(s, cal)
            if until.map({ first <= $0 }) ?? true { each(first) }
        }
        // A period that begins after the window ends the walk, even for a rule that takes no day.
        let toDay = startDay + Int(((to - Self.instant(s, cal)) / 86_400).rounded(.up)) + 2
        while budget > 0 {
            budget -= 1
            if periodStart(rule, s, startDay: startDay, period: k) > toDay { return false }
            for day in candidates(rule, s, startDay: startDay, period: k) where day > startDay {
                if let count = rule.count, emitted >= count { return false }
                let t = at(day)
                if let until, t > until { return false }
                if t >= to { return false }
                emitted += 1
                each(t)
            }
            k += 1
        }
        return true
    }

    /// The first day (since 1970) of period `k`.
    func periodStart(_ rule: RecurrenceRule, _ s: Moment, startDay: Int, period k: Int) -> Int {
        switch rule.frequency {
        case .daily: return startDay + k * rule.interval
        case .weekly: return startDay - (CivilDay.weekday(startDay) - rule.weekStart + 7) % 7 + 7 * k * rule.interval
        case .monthly:
            let index = s.year * 12 + (s.month - 1) + k * rule.interval
            return CivilDay.days(index / 12, index % 12 + 1, 1)
        case .yearly: return CivilDay.days(s.year + k * rule.interval, 1, 1)
        }
    }

    /// The days (since 1970) of period `k` that the rule takes, ascending.
    func candidates(_ rule: RecurrenceRule, _ s: Moment, startDay: Int, period k: Int) -> [Int] {
        func inMonths(_ day: Int) -> Bool { rule.byMonth.isEmpty || rule.byMonth.contains(CivilDay.date(day).month) }
        func weekdayOK(_ day: Int) -> Bool { rule.byDay.isEmpty || rule.byDay.contains { $0.weekday == CivilDay.weekday(day) } }
        func monthDayOK(_ day: Int) -> Bool {
            guard !rule.byMonthDay.isEmpty else { return true }
            let d = CivilDay.date(day), n = CivilDay.length(d.year, d.month)
            return rule.byMonthDay.contains { $0 > 0 ? $0 == d.day : n + 1 + $0 == d.day }
        }
        switch rule.frequency {
        case .daily:
            let day = startDay + k * rule.interval
            return inMonths(day) && weekdayOK(day) && monthDayOK(day) ? [day] : []
        case .weekly:
            let weekOf = startDay - (CivilDay.weekday(startDay) - rule.weekStart + 7) % 7 + 7 * k * rule.interval
            let days = rule.byDay.isEmpty ? [CivilDay.weekday(startDay)] : rule.byDay.map(\.weekday)
            return Set(days.map { weekOf + ($0 - rule.weekStart + 7) % 7 }).sorted().filter(inMonths)
        case .monthly:
            let index = s.year * 12 + (s.month - 1) + k * rule.interval
            let (y, m) = (index / 12, index % 12 + 1)
            guard rule.byMonth.isEmpty || rule.byMonth.contains(m) else { return [] }
            return daysOfMonth(rule, y, m, defaultDay: s.day)
        case .yearly:
            let y = s.year + k * rule.interval
            let months = !rule.byMonth.isEmpty ? rule.byMonth.sorted()
                : rule.byDay.isEmpty && rule.byMonthDay.isEmpty ? [s.month] : Array(1...12)
            return months.flatMap { daysOfMonth(rule, y, $0, defaultDay: s.day) }
        }
    }

    /// The days of month `m` of year `y` that BYMONTHDAY and BYDAY take (both: the days both
    /// take); neither: `defaultDay`, when the month has it.
    func daysOfMonth(_ rule: RecurrenceRule, _ y: Int, _ m: Int, defaultDay: Int) -> [Int] {
        let first = CivilDay.days(y, m, 1), n = CivilDay.length(y, m)
        var days: Set<Int>?
        if !rule.byMonthDay.isEmpty {
            days = Set(rule.byMonthDay.compactMap { d in
                let day = d > 0 ? d : n + 1 + d
                return (1...n).contains(day) ? first + day - 1 : nil
            })
        }
        if !rule.byDay.isEmpty {
            var byDay: Set<Int> = []
            for w in rule.byDay {
                let all = (0..<n).map { first + $0 }.filter { CivilDay.weekday($0) == w.weekday }
                if let o = w.ordinal {
                    let i = o > 0 ? o - 1 : all.count + o
                    if all.indices.contains(i) { byDay.insert(all[i]) }
                } else {
                    byDay.formUnion(all)
                }
            }
            days = days.map { $0.intersection(byDay) } ?? byDay
        }
        guard let days else { return defaultDay <= n ? [first + defaultDay - 1] : [] }
        return days.sorted()
    }
}
