import FlapCore
/// VBML's calendar component: a 6-row grid of one month, as Vestaboard's library draws it —
/// `M/YY` and the days' initials on the first row, then a row per week: its first and last
/// date (`8-14`) and a chip for each day, in `defaultDayColor` (yellow) unless `days` gives
/// the day its own.
enum VBMLCalendar {
    static func grid(_ c: VBMLDocument.Calendar, component: String) throws(VBMLDocument.Problem) -> [[Int]] {
        let month = c.month.value, year = c.year.value
        guard (1...12).contains(month) else { throw VBMLDocument.Problem("\(component).calendar.month: \(month) is not 1–12") }
        guard (1000...9999).contains(year) else { throw VBMLDocument.Problem("\(component).calendar.year: \(year) is not 1000–9999") }
        for code in [c.defaultDayColor].compactMap({ $0 }) + (c.days ?? [:]).values where Glyph(code: code) == nil {
            throw VBMLDocument.Problem("\(component).calendar: \(code) is not a Vestaboard character code")
        }
        var highlights: [(day: Int, code: Int)] = []
        for (key, code) in c.days ?? [:] {
            guard let day = Int(key), day >= 1 else {
                throw VBMLDocument.Problem("\(component).calendar.days: '\(key.prefix(12))' is not a day of the month")
            }
            highlights.append((day, code))
        }
        let days = daysIn(month: month, year: year)
        let offset = weekday(year: year, month: month, day: 1)  // 0 = Sunday
        let colour = c.defaultDayColor ?? 65
        let hideDates = c.hideDates ?? false
        func digit(_ d: Int) -> Int { hideDates ? 0 : (d == 0 ? 36 : d + 26) }
        func digits(_ n: Int) -> [Int] { String(n).map { digit(Int(String($0))!) } }
        let dash = hideDates ? 0 : 44
        let blank10 = [Int](repeating: 0, count: 10)

        // The header's digits are shown even with hideDates.
        func shown(_ text: String) -> [Int] {
            text.compactMap { $0.wholeNumberValue }.map { d in d == 0 ? 36 : d + 26 }
        }
        var header: [Int] = [0, 0, 0, 0, 0]
        if !(c.hideMonthYear ?? false) {
            let yy = String(String(year).dropFirst(2).prefix(2))
            header = shown(String(month)) + [59] + shown(yy)
        }
        header += [Int](repeating: 0, count: 5 - header.count)
        header += c.hideSMTWTFS ?? false ? [Int](repeating: 0, count: 7) : [19, 13, 20, 23, 20, 6, 19]
        header += blank10

        let firstEnd = 7 - offset
        var first: [Int] = firstEnd == 1 ? [0, 0, 0, digit(1), 0] : [0, digit(1), dash, digit(firstEnd), 0]
        first += [Int](repeating: 0, count: offset)
        first += [Int](repeating: colour, count: 7 - offset)
        first += blank10

        func week(_ start: Int, _ end: Int) -> [Int] {
            let s: [Int] = digits(start), e: [Int] = digits(end)
            var row: [Int] = s.count > 1 ? s : [0] + s
            row.append(dash)
            row += e.count > 1 ? e : e + [0]
            row += [Int](repeating: colour, count: 7)
            row += blank10
            return row
        }
        var rows = [header, first, week(firstEnd + 1, firstEnd + 7), week(firstEnd + 8, firstEnd + 14), week(firstEnd + 15, firstEnd + 21)]
        let fifthStart = firstEnd + 22
        if fifthStart <= days {
            let inRow = days - fifthStart + 1
            let alone = fifthStart == days
            var fifth: [Int] = digits(fifthStart)
            fifth.append(hideDates || alone ? 0 : 44)
            fifth += alone ? [0, 0] : digits(days)
            fifth += [Int](repeating: colour, count: inRow)
            fifth += [Int](repeating: 0, count: max(0, 22 - fifth.count))
            rows.append(fifth)
        } else {
            rows.append([Int](repeating: 0, count: 22))
        }
        for (day, code) in highlights where day <= days {
            let row = (day + offset - 1) / 7 + 1
            let column = (day + offset - 1) % 7
            if row > 5 { rows[5][column == 0 ? 12 : 13] = code } else { rows[row][column + 5] = code }
        }
        return rows
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The day of the week in the Gregorian calendar, 0 = Sunday (Sakamoto's method).
    static func weekday(year: Int, month: Int, day: Int) -> Int {
        let t = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4]
        let y = month < 3 ? year - 1 : year
        return (y + y / 4 - y / 100 + y / 400 + t[month - 1] + day) % 7
    }
}
