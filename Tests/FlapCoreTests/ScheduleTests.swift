import FlapMessages
import Foundation
import Testing

/// When schedule entries speak and what they say, in a time zone with DST (Europe/Berlin:
/// 2026-03-29 02:00 → 03:00, 2026-10-25 03:00 → 02:00), across midnight and year ends.
@Suite struct ScheduleTests {
    static let berlin: Calendar = {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "Europe/Berlin")!
        return c
    }()

    /// Seconds since 1970 of an ISO 8601 instant with its offset: the expected values are read
    /// independently of the code under test.
    static func at(_ iso: String) -> Double {
        let f = ISO8601DateFormatter()
        return f.date(from: iso)!.timeIntervalSince1970
    }

    func next(_ when: ScheduleWhen, after iso: String) -> Double? { when.next(after: Self.at(iso), in: Self.berlin) }

    @Test func aTimeOfDayIsReadInTheZoneAcrossTheSpringChange() {
        let seven = ScheduleWhen(minutes: [7 * 60])
        #expect(next(seven, after: "2026-03-28T08:00:00+01:00") == Self.at("2026-03-29T07:00:00+02:00"))
        #expect(next(seven, after: "2026-03-29T07:00:00+02:00") == Self.at("2026-03-30T07:00:00+02:00"))
    }

    @Test func aTimeTheClockSkipsSpeaksRightAfterTheJump() {
        let half = ScheduleWhen(minutes: [2 * 60 + 30])
        #expect(next(half, after: "2026-03-28T12:00:00+01:00") == Self.at("2026-03-29T03:00:00+02:00"))
        #expect(next(half, after: "2026-03-29T03:00:00+02:00") == Self.at("2026-03-30T02:30:00+02:00"))
    }

    @Test func aTimeTheClockPassesTwiceSpeaksOnce() {
        let half = ScheduleWhen(minutes: [2 * 60 + 30])
        let first = next(half, after: "2026-10-24T12:00:00+02:00")
        #expect(first == Self.at("2026-10-25T02:30:00+02:00"))
        #expect(half.next(after: first!, in: Self.berlin) == Self.at("2026-10-26T02:30:00+01:00"))
        // Every 30 minutes on that day: 48 wall-clock times, spoken 48 times over its 25 hours.
        let halfHours = ScheduleWhen(minutes: ScheduleWhen.every(30), dates: [ScheduleWhen.Day("2026-10-25")!])
        var t = Self.at("2026-10-24T23:59:00+02:00"), count = 0
        while let n = halfHours.next(after: t, in: Self.berlin) { count += 1; t = n }
        #expect(count == 48)
    }

    @Test func midnightAndTheLastTimeAtOrBefore() {
        let midnight = ScheduleWhen(minutes: [0])
        #expect(next(midnight, after: "2026-12-31T23:59:30+01:00") == Self.at("2027-01-01T00:00:00+01:00"))
        let t = Self.at("2027-01-01T00:00:00+01:00")
        #expect(midnight.last(atOrBefore: t, in: Self.berlin) == t)
        #expect(midnight.last(atOrBefore: t - 1, in: Self.berlin) == Self.at("2026-12-31T00:00:00+01:00"))
    }

    @Test func weekdaysDatesAndSpans() {
        let workdays = ScheduleWhen(minutes: [7 * 60], weekdays: [2, 3, 4, 5, 6])
        #expect(next(workdays, after: "2026-11-27T08:00:00+01:00") == Self.at("2026-11-30T07:00:00+01:00"))  // Fri → Mon
        let eve = ScheduleWhen(minutes: [18 * 60], dates: [ScheduleWhen.Day("12-24")!])
        #expect(next(eve, after: "2026-12-25T00:00:00+01:00") == Self.at("2027-12-24T18:00:00+01:00"))
        let leap = ScheduleWhen(minutes: [9 * 60], dates: [ScheduleWhen.Day("02-29")!])
        #expect(next(leap, after: "2026-03-01T00:00:00+01:00") == Self.at("2028-02-29T09:00:00+01:00"))
        let once = ScheduleWhen(minutes: [9 * 60], dates: [ScheduleWhen.Day("2026-01-01")!])
        #expect(next(once, after: "2026-01-02T00:00:00+01:00") == nil)
        let quarter = ScheduleWhen(minutes: ScheduleWhen.every(15, from: 7 * 60, to: 8 * 60))
        #expect(quarter.minutes == [420, 435, 450, 465, 480])
        #expect(next(quarter, after: "2026-11-27T08:00:00+01:00") == Self.at("2026-11-28T07:00:00+01:00"))
        #expect(ScheduleWhen.Day("2027-02-29") == nil)
        #expect(ScheduleWhen.Day("13-01") == nil)
        #expect(ScheduleWhen.Day("12-24-") == nil)
    }

    @Test func propsAreFilledInAtTheInstant() throws {
        let text = try ScheduleText("{63}IT IS {{time}} ON {{date:EEEE d MMMM}}")
        #expect(text.render(at: Self.at("2026-03-29T03:05:00+02:00"), in: Self.berlin) == "{63}IT IS 03:05 ON Sunday 29 March")
        let countdown = try ScheduleText("{{days_until:12-24}} DAYS / {{days_until:2026-12-24}} / {{days_since:2026-01-01}}")
        #expect(countdown.render(at: Self.at("2026-12-20T23:30:00+01:00"), in: Self.berlin) == "4 DAYS / 4 / 353")
        #expect(countdown.render(at: Self.at("2026-12-24T00:10:00+01:00"), in: Self.berlin) == "0 DAYS / 0 / 357")
        #expect(countdown.render(at: Self.at("2026-12-25T08:00:00+01:00"), in: Self.berlin) == "364 DAYS / -1 / 358")
        // Across the spring change: whole days, not 24-hour spans.
        let spring = try ScheduleText("{{days_until:2026-03-30}}")
        #expect(spring.render(at: Self.at("2026-03-28T23:30:00+01:00"), in: Self.berlin) == "2")
    }

    @Test func aTemplateSaysWhatIsWrongWithIt() {
        #expect(throws: ScheduleText.Problem.self) { try ScheduleText("{{weather}}") }
        #expect(throws: ScheduleText.Problem.self) { try ScheduleText("IT IS {{time") }
        #expect(throws: ScheduleText.Problem.self) { try ScheduleText("{{days_since:12-24}}") }
        #expect(throws: ScheduleText.Problem.self) { try ScheduleText(String(repeating: "A", count: 2001)) }
        do { _ = try ScheduleText("{{weather}}"); Issue.record("taken") } catch { #expect(error.description.contains("unknown prop {{weather}}")) }
    }

    @Test func anEntrySaysOnceAndLivesItsDuration() throws {
        let entry = ScheduleEntry(id: "tea", when: ScheduleWhen(minutes: [16 * 60]), text: try ScheduleText("TEA AT {{time}}"), duration: 600)
        let m = try #require(entry.current(at: Self.at("2026-11-27T16:05:00+01:00"), in: Self.berlin))
        #expect(m.content == "TEA AT 16:00" && m.senderID == "@schedule:tea" && m.isOwn && !m.isLocal)
        #expect(m.id == entry.message(at: Self.at("2026-11-27T16:00:00+01:00"), in: Self.berlin).id)
        #expect(entry.current(at: Self.at("2026-11-27T16:10:00+01:00"), in: Self.berlin) == nil)
        var inbox = Inbox()
        #expect(inbox.receive(m, now: Self.at("2026-11-27T16:05:00+01:00")) == .shown)
        #expect(inbox.receive(m, now: Self.at("2026-11-27T16:06:00+01:00")) == .duplicate)
        // A catch-up with the message API leaves the board's own senders alone.
        let changed = inbox.sync(with: [], now: Self.at("2026-11-27T16:07:00+01:00"))
        #expect(!changed)
        #expect(inbox.live["@schedule:tea"] != nil)
    }
}

/// How a zone chooses among its messages by priority and hold.
@Suite struct ZonePriorityTests {
    func message(_ id: String, at t: Double, _ priority: InboxMessage.Priority? = nil, hold: Double? = nil) -> InboxMessage {
        InboxMessage(id: id, senderID: id, senderName: id, content: id, sentAt: t, priority: priority, holdSeconds: hold)
    }

    @Test func overShowsOverNewerMessagesAndIdleOnlyAlone() {
        var cursor = ZoneCursor()
        let over = message("over", at: 10, .over), person = message("person", at: 20), idle = message("idle", at: 30, .idle)
        #expect(cursor.pick([over, person, idle], rotateSeconds: nil, now: 30).message?.id == "over")
        #expect(cursor.pick([person, idle], rotateSeconds: nil, now: 31).message?.id == "person")
        #expect(cursor.pick([idle], rotateSeconds: nil, now: 32).message?.id == "idle")
        #expect(cursor.pick([], rotateSeconds: nil, now: 33).message == nil)
    }

    @Test func aHeldMessageIsNotCutOffMidRead() {
        var cursor = ZoneCursor()
        let held = message("morning", at: 100, hold: 30), person = message("person", at: 110)
        #expect(cursor.pick([held], rotateSeconds: nil, now: 100).message?.id == "morning")
        let during = cursor.pick([held, person], rotateSeconds: nil, now: 110)
        #expect(during.message?.id == "morning" && during.next == 130)
        #expect(cursor.pick([held, person], rotateSeconds: nil, now: 130).message?.id == "person")
    }
}
