import FlapInput
import Foundation
import Testing

/// The calendar reader (issue 36, items 2 and 5): events, recurrences across DST, exceptions
/// and overrides, and every limit of a hostile feed.
@Suite struct ICalendarTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static func at(_ iso: String) -> Double { ISO8601DateFormatter().date(from: iso)!.timeIntervalSince1970 }

    func feed(_ events: String) -> [UInt8] {
        Array("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n\(events)END:VCALENDAR\r\n".utf8)
    }

    func starts(_ ics: [UInt8], _ from: String, _ to: String) throws -> [Double] {
        try ICalendar.parse(ics).occurrences(from: Self.at(from), to: Self.at(to), zone: Self.berlin).occurrences.map(\.start)
    }

    @Test func aWeeklyMeetingKeepsItsTimeOfDayAcrossDST() throws {
        let ics = feed("""
            BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:Standup\r\nDTSTART;TZID=Europe/Berlin:20260323T090000\r\nDURATION:PT15M\r\n\
            RRULE:FREQ=WEEKLY;BYDAY=MO,FR;COUNT=4\r\nEND:VEVENT\r\n
            """)
        #expect(try starts(ics, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z") == [
            Self.at("2026-03-23T09:00:00+01:00"), Self.at("2026-03-27T09:00:00+01:00"),
            Self.at("2026-03-30T09:00:00+02:00"), Self.at("2026-04-03T09:00:00+02:00"),
        ])
    }

    @Test func monthlyLastFridayUntilWithAnExceptionAndAMovedOne() throws {
        let ics = feed("""
            BEGIN:VEVENT\r\nUID:m\r\nSUMMARY:Club\r\nDTSTART;TZID=Europe/Berlin:20260130T183000\r\nDTEND;TZID=Europe/Berlin:20260130T203000\r\n\
            RRULE:FREQ=MONTHLY;BYDAY=-1FR;UNTIL=20260601T000000Z\r\nEXDATE;TZID=Europe/Berlin:20260424T183000\r\nEND:VEVENT\r\n\
            BEGIN:VEVENT\r\nUID:m\r\nSUMMARY:Club (moved)\r\nRECURRENCE-ID;TZID=Europe/Berlin:20260227T183000\r\n\
            DTSTART;TZID=Europe/Berlin:20260226T190000\r\nDTEND;TZID=Europe/Berlin:20260226T210000\r\nEND:VEVENT\r\n
            """)
        let found = try ICalendar.parse(ics).occurrences(from: Self.at("2026-01-01T00:00:00Z"), to: Self.at("2027-01-01T00:00:00Z"), zone: Self.berlin).occurrences
        #expect(found.map(\.summary) == ["Club", "Club (moved)", "Club", "Club"])
        #expect(found.map(\.start) == [Self.at("2026-01-30T18:30:00+01:00"), Self.at("2026-02-26T19:00:00+01:00"),
                                       Self.at("2026-03-27T18:30:00+01:00"), Self.at("2026-05-29T18:30:00+02:00")])
        #expect(found[0].end - found[0].start == 7200)
    }

    @Test func aBirthdayOnTheLeapDayAndAnAllDayEventInTheWindow() throws {
        let ics = feed("""
            BEGIN:VEVENT\r\nSUMMARY:Leap\r\nDTSTART;VALUE=DATE:20240229\r\nRRULE:FREQ=YEARLY\r\nEND:VEVENT\r\n\
            BEGIN:VEVENT\r\nSUMMARY:Trip\r\nDTSTART;VALUE=DATE:20261223\r\nDTEND;VALUE=DATE:20261227\r\nEND:VEVENT\r\n
            """)
        let cal = try ICalendar.parse(ics)
        let leap = cal.occurrences(from: Self.at("2026-01-01T00:00:00Z"), to: Self.at("2028-12-31T00:00:00Z"), zone: Self.berlin)
            .occurrences.filter { $0.summary == "Leap" }.map(\.start)
        #expect(leap == [Self.at("2028-02-29T00:00:00+01:00")])
        // On the 24th at 07:00 the trip is under way: it overlaps the day.
        let day = cal.occurrences(from: Self.at("2026-12-24T07:00:00+01:00"), to: Self.at("2026-12-25T00:00:00+01:00"), zone: Self.berlin).occurrences
        #expect(day.map(\.summary) == ["Trip"] && day.first?.allDay == true && day.first?.end == Self.at("2026-12-27T00:00:00+01:00"))
    }

    @Test func textIsUnfoldedAndUnescaped() throws {
        let ics = feed("BEGIN:VEVENT\r\nSUMMARY:Dinner\\, then\r\n  a film\\nat 8\r\nLOCATION;LANGUAGE=en:\"Home\"\r\nDTSTART:20261224T180000Z\r\nEND:VEVENT\r\n")
        let e = try #require(try ICalendar.parse(ics).events.first)
        #expect(e.summary == "Dinner, then a film\nat 8" && e.location == "\"Home\"")
    }

    @Test func aHostileFeedCostsBoundedTimeAndSaysWhy() throws {
        // A COUNT of 10⁹ from long ago: followed for a bounded number of periods, and said.
        let long = feed("BEGIN:VEVENT\r\nSUMMARY:Forever\r\nDTSTART:10000101T000000Z\r\nRRULE:FREQ=DAILY;COUNT=1000000000\r\nEND:VEVENT\r\n")
        let (found, problems) = try ICalendar.parse(long).occurrences(from: Self.at("2026-01-01T00:00:00Z"), to: Self.at("2026-01-02T00:00:00Z"), zone: Self.berlin)
        #expect(found.isEmpty && problems.first?.contains("no further") == true, "\(problems)")
        // Without COUNT, the years before the window are skipped: found.
        let skipped = feed("BEGIN:VEVENT\r\nSUMMARY:Daily\r\nDTSTART:19000101T070000Z\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n")
        #expect(try starts(skipped, "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z") == [Self.at("2026-01-01T07:00:00Z"), Self.at("2026-01-02T07:00:00Z")])
        // A rule that takes no day ends at the window.
        let never = feed("BEGIN:VEVENT\r\nSUMMARY:Never\r\nDTSTART:20260101T070000Z\r\nRRULE:FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=30\r\nEND:VEVENT\r\n")
        #expect(try ICalendar.parse(never).occurrences(from: 0, to: Self.at("2030-01-01T00:00:00Z"), zone: Self.berlin).problems.isEmpty)
        let deep = Array("BEGIN:VCALENDAR\r\n\(String(repeating: "BEGIN:X\r\n", count: 100))".utf8)
        #expect(throws: ICalendar.Problem.self) { try ICalendar.parse(deep) }
        let wide = Array("BEGIN:VCALENDAR\r\nX:\(String(repeating: "a", count: 17_000))\r\nEND:VCALENDAR\r\n".utf8)
        #expect(throws: ICalendar.Problem.self) { try ICalendar.parse(wide) }
        #expect(throws: ICalendar.Problem.self) { try ICalendar.parse([0xFF, 0xFE]) }
        #expect(throws: ICalendar.Problem.self) { try ICalendar.parse(Array("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nEND:VCALENDAR\r\n".utf8)) }
        // An event that cannot be read is left out and named; the others stay.
        let mixed = feed("""
            BEGIN:VEVENT\r\nSUMMARY:Odd\r\nDTSTART:20261224T180000Z\r\nRRULE:FREQ=HOURLY\r\nEND:VEVENT\r\n\
            BEGIN:VEVENT\r\nSUMMARY:Fine\r\nDTSTART:20261224T180000Z\r\nEND:VEVENT\r\n
            """)
        let cal = try ICalendar.parse(mixed)
        #expect(cal.events.map(\.summary) == ["Fine"] && cal.problems.first?.contains("FREQ=HOURLY is not supported") == true, "\(cal.problems)")
    }
}

@Suite struct JSONPathTests {
    let doc = try! JSONSerialization.jsonObject(with: Data(#"{"current":{"temperature_2m":3.7,"code":61,"ok":true},"list":[{"a":1},{"a":2}],"key.with dots":"x","n":null}"#.utf8))

    func value(_ path: String) throws -> String? { try JSONPath(path).value(in: doc).flatMap { JSONPath.text($0) } }

    @Test func pathsFindValues() throws {
        #expect(try value("current.temperature_2m") == "3.7")
        #expect(try value("current.code") == "61")
        #expect(try value("current.ok") == "true")
        #expect(try value("list[1].a") == "2" && value("list[-1].a") == "2" && value("list[2].a") == nil)
        #expect(try value("[\"key.with dots\"]") == "x")
        #expect(try value("n") == "" && value("missing") == nil && value("current") == nil)
        #expect(JSONPath.text(3.7 as NSNumber, decimals: 0) == "4")
    }

    @Test func aBadPathSaysWhere() {
        for bad in ["", ".a", "a..b", "a[", "a[x]", "a[\"b", "a[1", String(repeating: "a.", count: 40) + "a"] {
            #expect(throws: JSONPath.Problem.self, "\(bad)") { try JSONPath(bad) }
        }
        do { _ = try JSONPath("a[x]"); Issue.record("taken") } catch { #expect(error.description.contains("at character 3")) }
    }
}
