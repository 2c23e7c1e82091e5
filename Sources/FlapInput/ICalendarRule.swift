import Foundation

/// An `RRULE` as flapd expands it: FREQ=DAILY, WEEKLY, MONTHLY or YEARLY with INTERVAL, COUNT,
/// UNTIL, BYDAY (with ordinals in MONTHLY, and in YEARLY with BYMONTH: `2MO`, `-1FR`),
/// BYMONTHDAY (negative from the month's end), BYMONTH and WKST. Any other part (BYSETPOS,
/// BYHOUR, BYWEEKNO, BYYEARDAY, FREQ=HOURLY …) is refused, by name: the event is left out and
/// named in the calendar's problems rather than shown on the wrong days.
public struct RecurrenceRule: Sendable, Hashable {
    public enum Frequency: String, Sendable, Hashable { case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY" }
    public var frequency: Frequency
    public var interval = 1
    public var count: Int?
    public var until: ICalendar.Moment?
    /// Weekdays 1 = Sunday … 7 = Saturday, each with its ordinal in the month (or year), if any.
    public var byDay: [WeekdayNumber] = []
    public var byMonthDay: [Int] = []
    public var byMonth: [Int] = []
    /// The first day of the week (1 = Sunday … 7 = Saturday); Monday unless WKST says.
    public var weekStart = 2

    public struct WeekdayNumber: Sendable, Hashable {
        public var ordinal: Int?
        public var weekday: Int
    }

    static let weekdays = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"]

    init(_ text: String, start: ICalendar.Moment) throws(ICalendar.Problem) {
        func problem(_ s: String) -> ICalendar.Problem { ICalendar.Problem(description: "RRULE: \(s)") }
        var frequency: Frequency?
        for part in text.split(separator: ";") {
            let kv = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2 else { throw problem("'\(part.prefix(40))' is not NAME=VALUE") }
            let (key, value) = (kv[0].uppercased(), kv[1].uppercased())
            let list = value.split(separator: ",").map(String.init)
            guard list.count <= 64 else { throw problem("\(key) lists more than 64 values") }
            switch key {
            case "FREQ":
                guard let f = Frequency(rawValue: value) else { throw problem("FREQ=\(value.prefix(20)) is not supported (DAILY, WEEKLY, MONTHLY, YEARLY)") }
                frequency = f
            case "INTERVAL":
                guard let n = Int(value), (1...10_000).contains(n) else { throw problem("INTERVAL=\(value.prefix(20)) is not 1 to 10000") }
                interval = n
            case "COUNT":
                guard let n = Int(value), n >= 1 else { throw problem("COUNT=\(value.prefix(20)) is not a positive number") }
                count = n
            case "UNTIL":
                until = try ICalendar.moment(value, [:], what: "UNTIL")
            case "BYDAY":
                byDay = try list.map { item throws(ICalendar.Problem) in
                    let name = String(item.suffix(2)), prefix = String(item.dropLast(2))
                    guard let w = Self.weekdays.firstIndex(of: name) else { throw problem("BYDAY=\(item.prefix(10)) is not a weekday") }
                    guard prefix.isEmpty || Int(prefix).map({ (1...53).contains(abs($0)) }) == true else { throw problem("BYDAY=\(item.prefix(10)): bad ordinal") }
                    return WeekdayNumber(ordinal: prefix.isEmpty ? nil : Int(prefix), weekday: w + 1)
                }
            case "BYMONTHDAY":
                byMonthDay = try list.map { item throws(ICalendar.Problem) in
                    guard let n = Int(item), n != 0, (-31...31).contains(n) else { throw problem("BYMONTHDAY=\(item.prefix(10)) is not ±1 to ±31") }
                    return n
                }
            case "BYMONTH":
                byMonth = try list.map { item throws(ICalendar.Problem) in
                    guard let n = Int(item), (1...12).contains(n) else { throw problem("BYMONTH=\(item.prefix(10)) is not 1 to 12") }
                    return n
                }
            case "WKST":
                guard let w = Self.weekdays.firstIndex(of: value) else { throw problem("WKST=\(value.prefix(10)) is not a weekday") }
                weekStart = w + 1
            default:
                throw problem("\(key.prefix(20)) is not supported")
            }
        }
        guard let frequency else { throw problem("no FREQ") }
        self.frequency = frequency
        if byDay.contains(where: { $0.ordinal != nil }) {
            guard frequency == .monthly || (frequency == .yearly && !byMonth.isEmpty) else {
                throw problem("BYDAY with an ordinal is supported with FREQ=MONTHLY, or YEARLY with BYMONTH")
            }
        }
    }
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar, and back (pure integer
/// arithmetic: no time zone, no DST).
enum CivilDay {
    static func days(_ y: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y - 1 : y
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func date(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// 1 = Sunday … 7 = Saturday.
    static func weekday(_ days: Int) -> Int { ((days + 4) % 7 + 7) % 7 + 1 }

    static func length(_ y: Int, _ m: Int) -> Int {
        [31, y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
    }
}
