@testable import FlapBoard
@testable import FlapConfig
import FlapCore
@testable import FlapMessages
import FlapTerminal
import Foundation
import Logging
import Synchronization
import Testing

/// Issue 36, item 1: schedule entries as senders — read from the config with every mistake
/// named, spoken by the speaker at their times (on a clock of the test's own, across a DST
/// change), and shown by the mailroom over, under or beside people's messages, with a hold.
@Suite struct ScheduleSenderTests {
    static func at(_ iso: String) -> Double { ISO8601DateFormatter().date(from: iso)!.timeIntervalSince1970 }

    @Test func entriesAreReadAndRoutedToTheWholeBoardWhenNoZoneTakesThem() throws {
        let config = try ConfigLoader.parse("""
            time_zone: Europe/Berlin
            schedule:
              - id: morning
                at: ["07:00", "07:30"]
                days: [mon, tue, wed, thu, fri]
                text: "GOOD MORNING {{date:EEEE}}"
                for_seconds: 900
                priority: over
                min_hold_seconds: 20
              - { id: clock, every_minutes: 15, from: "06:00", to: "23:00", text: "{{time}}", priority: idle }
              - { id: xmas, at: "08:00", dates: ["12-24"], text: "{{days_until:12-24}} DAYS" }
            """)
        #expect(config.timeZone.identifier == "Europe/Berlin")
        #expect(config.schedule.map(\.id) == ["morning", "clock", "xmas"])
        let morning = config.schedule[0]
        #expect(morning.when.minutes == [420, 450] && morning.when.weekdays == [2, 3, 4, 5, 6])
        #expect(morning.duration == 900 && morning.priority == .over && morning.holdSeconds == 20)
        #expect(config.schedule[1].when.minutes.count == 69 && config.schedule[1].priority == .idle)
        #expect(config.schedule[2].when.dates == [ScheduleWhen.Day(month: 12, day: 24)] && config.schedule[2].duration == nil)
        // No zones: the local sender's zone takes them, over the whole board.
        let zone = try #require(config.routedZones.last)
        #expect(zone.senders == .listed(["@local", "@schedule:morning", "@schedule:clock", "@schedule:xmas"]))
        // A `*` zone takes them like any sender.
        let zoned = try ConfigLoader.parse("""
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones: [{ rows: [0, 5], senders: "*" }]
            schedule: [{ id: tea, at: "16:00", text: TEA }]
            """)
        #expect(zoned.routedZones.last?.senders == .listed(["@local"]))
        #expect(SenderRouter(zones: zoned.routedZones).zones(for: zoned.schedule[0].message(at: 0, in: zoned.calendar)) == [0])
    }

    @Test func aSourcesURLMayComeFromTheEnvironment() throws {
        let yaml = """
            sources: [{ id: weather, json_env: WEATHER_URL }]
            schedule: [{ id: w, at: "07:00", text: "{{weather:current.t}}" }]
            """
        let config = try ConfigLoader.parse(yaml, environment: ["WEATHER_URL": "https://example.org/?appid=secret"])
        #expect(config.sources.first?.location == "https://example.org/?appid=secret" && config.sources.first?.kind == .json)
        do {
            _ = try ConfigLoader.parse(yaml, environment: [:])
            Issue.record("taken")
        } catch {
            #expect(error.issues.map(\.description).contains { $0.hasPrefix("sources[0].json_env: the environment variable WEATHER_URL is not set") }, "\(error.issues)")
        }
    }

    @Test func everyMistakeIsNamedWithItsPlace() {
        let yaml = """
            time_zone: Mars/Olympus
            schedule:
              - { id: a, at: "7:00", text: A }
              - { id: b, at: "07:00", every_minutes: 5, text: B }
              - { id: c, at: "07:00", text: "{{weather}}" }
              - { id: d, at: "07:00", text: D, for_seconds: 5 }
              - { id: e, at: "07:00", text: E, days: [funday] }
              - { id: f, at: "07:00", text: F, dates: ["02-30"] }
              - { id: a, at: "07:00", text: G }
              - { id: "no space", text: H }
              - { id: i, every_minutes: 10, from: "22:00", to: "06:00", text: I }
              - { id: j, at: "07:00", text: J, priority: loud }
              - { id: k, at: "07:00", text: K, priority: over }
            """
        do {
            _ = try ConfigLoader.parse(yaml)
            Issue.record("taken")
        } catch {
            let said = error.issues.map(\.description)
            let expected = [
                "time_zone: 'Mars/Olympus' is not a time zone",
                "schedule[0].at: '7:00' is not a time of day HH:MM",
                "schedule[1].every_minutes: give at or every_minutes, not both",
                "schedule[2].text: unknown prop {{weather}}",
                "schedule[3].for_seconds: 5 is outside 10…43200",
                "schedule[4].days: 'funday' is not a weekday",
                "schedule[5].dates: '02-30' is not a date MM-DD",
                "schedule[6].id: 'a' names another entry too",
                "schedule[7].id: 'no space' is not a name",
                "schedule[7].at: missing",
                "schedule[8].to: ends before from",
                "schedule[9].priority: 'loud' is not one of over, under, idle",
                "schedule[10].priority: over needs for_seconds",
            ]
            for e in expected { #expect(said.contains { $0.hasPrefix(e) }, "\(e) — said: \(said)") }
            #expect(said.count == expected.count, "\(said)")
        }
    }

    /// A clock the speaker waits on: each wait moves it to the instant waited for; after
    /// `rounds` waits the speaker's task is cancelled.
    final class Clock: Sendable {
        let seconds: Mutex<Double>
        let rounds: Int
        private let waits = Mutex(0)
        init(_ start: Double, rounds: Int) { seconds = Mutex(start); self.rounds = rounds }
        var now: Double { seconds.withLock { $0 } }
        func wait(until: Double) {
            let n = waits.withLock { $0 += 1; return $0 }
            if n >= rounds || !until.isFinite { withUnsafeCurrentTask { $0?.cancel() }; return }
            seconds.withLock { $0 = max($0, until) }
        }
    }

    @Test func theSpeakerSaysEachTimeOnceAcrossTheSpringChange() async throws {
        let config = try ConfigLoader.parse("""
            time_zone: Europe/Berlin
            schedule: [{ id: morning, at: "07:00", for_seconds: 600, text: "MORNING {{date:d MMM}} {{time}}" }]
            """)
        let clock = Clock(Self.at("2026-03-28T06:00:00+01:00"), rounds: 3)
        let said = Mutex<[InboxMessage]>([])
        let speaker = ScheduleSpeaker(entries: config.schedule, calendar: config.calendar, logger: Logger(label: "test"),
                                      now: { clock.now }, wait: { until, _ in clock.wait(until: until) }) { m in said.withLock { $0.append(m) } }
        await Task { await speaker.run() }.value
        let messages = said.withLock { $0 }
        // 06:00 on the 28th: yesterday's message has had its 10 minutes; then the 28th, then the 29th (CEST).
        #expect(messages.map(\.sentAt) == [Self.at("2026-03-28T07:00:00+01:00"), Self.at("2026-03-29T07:00:00+02:00")])
        #expect(messages.map(\.content) == ["MORNING 28 Mar 07:00", "MORNING 29 Mar 07:00"])
        let status = speaker.status(at: clock.now)
        #expect(status.first?.last == Self.at("2026-03-29T07:00:00+02:00"))
        #expect(status.first?.next == Self.at("2026-03-30T07:00:00+02:00"))
    }

    @Test func atItsStartTheSpeakerSaysWhatStillLives() async throws {
        let config = try ConfigLoader.parse("""
            time_zone: UTC
            schedule:
              - { id: short, at: "07:00", for_seconds: 600, text: SHORT }
              - { id: lasting, at: "05:00", text: LASTING }
            """)
        let clock = Clock(Self.at("2026-11-27T07:05:00Z"), rounds: 1)
        let said = Mutex<[String]>([])
        let speaker = ScheduleSpeaker(entries: config.schedule, calendar: config.calendar, logger: Logger(label: "test"),
                                      now: { clock.now }, wait: { until, _ in clock.wait(until: until) }) { m in said.withLock { $0.append(m.content) } }
        await Task { await speaker.run() }.value
        #expect(said.withLock { $0 } == ["SHORT", "LASTING"])
    }

    /// The mailroom, with a message API zone over the whole board and the schedule in it.
    func mailroom(_ schedule: String, clock: MailroomTests.Clock) throws -> (Mailroom, Wall, FlapdConfig) {
        let config = try ConfigLoader.parse("""
            time_zone: UTC
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones: [{ rows: [0, 5], senders: "*" }]
            schedule:
            \(schedule)
            """)
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let wall = Wall(config: config, drivers: [], logger: logger)
        return (Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: logger, now: { clock.now }) { _, _ in }, wall, config)
    }

    func shows(_ wall: Wall) -> String {
        PlainFrame.rows(wall.target(board: 0)).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "/")
    }

    func person(_ id: String, at t: Double) -> InboxMessage {
        InboxMessage(id: id, senderID: "alice", senderName: "alice", content: id.uppercased(), sentAt: t)
    }

    @Test func overShowsOverPeopleForItsDurationThenGivesTheBoardBack() async throws {
        let clock = MailroomTests.Clock()
        let (mailroom, wall, config) = try mailroom("  - { id: tea, at: \"16:00\", for_seconds: 600, priority: over, text: TEA }", clock: clock)
        await mailroom.take(.new(person("hello", at: clock.now)))
        #expect(shows(wall) == "HELLO")
        await mailroom.take(own: config.schedule[0].message(at: clock.now, in: config.calendar))
        #expect(shows(wall) == "TEA")
        clock.advance(60)
        await mailroom.take(.new(person("newer", at: clock.now)))
        #expect(shows(wall) == "TEA", "over: a newer message of a person waits")
        clock.advance(541)
        await mailroom.refresh()
        #expect(shows(wall) == "NEWER")
    }

    @Test func idleShowsOnlyOnAnEmptyZoneAndUnderGivesWayToNewer() async throws {
        let clock = MailroomTests.Clock()
        let (mailroom, wall, config) = try mailroom("""
              - { id: idle, at: "03:00", priority: idle, text: IDLE }
              - { id: under, at: "04:00", text: UNDER }
            """, clock: clock)
        await mailroom.take(own: config.schedule[0].message(at: clock.now, in: config.calendar))
        #expect(shows(wall) == "IDLE")
        clock.advance(10)
        await mailroom.take(.new(person("hello", at: clock.now)))
        #expect(shows(wall) == "HELLO")
        clock.advance(10)
        await mailroom.take(own: config.schedule[1].message(at: clock.now, in: config.calendar))
        #expect(shows(wall) == "UNDER")
        clock.advance(10)
        await mailroom.take(.new(person("newer", at: clock.now)))
        #expect(shows(wall) == "NEWER")
    }

    @Test func aVBMLEntryHasItsPropsFilledWhenItSpeaks() async throws {
        let clock = MailroomTests.Clock()
        let (mailroom, wall, config) = try mailroom(#"  - { id: clock, at: "07:00", vbml: '{"props": {"t": "{{time}}", "n": 5}, "components": [{"style": {"height": 1}, "template": "IT IS {{t}} {{n}}"}]}' }"#, clock: clock)
        let seven = 1_800_000_000 - 1_800_000_000.truncatingRemainder(dividingBy: 86_400) + 7 * 3600
        let m = config.schedule[0].message(at: seven, in: config.calendar)
        #expect(m.contentType == .vbml && m.content.contains(#""t":"07:00""#), "\(m.content)")
        await mailroom.take(own: m)
        #expect(shows(wall) == "IT IS 07:00 5")
        #expect(throws: ConfigError.self) {
            try ConfigLoader.parse(#"schedule: [{ id: x, at: "07:00", vbml: '{"components": [{"template": "A"}], "props": {"a": "{{nope}}"}}' }]"#)
        }
        do {
            _ = try ConfigLoader.parse(#"schedule: [{ id: x, at: "07:00", vbml: '{"components": 5}' }]"#)
            Issue.record("taken")
        } catch {
            #expect(error.issues.first?.description.hasPrefix("schedule[0].vbml: not a VBML document") == true, "\(error.issues)")
        }
    }

    /// Issue 36, item 3: a rotating zone shows the schedule's messages in turn with people's,
    /// each for its own dwell time; an `idle` one takes no turn while others live.
    @Test func aRotatingZoneGivesTheScheduleItsTurnsAndDwellTimes() async throws {
        let clock = MailroomTests.Clock()
        let config = try ConfigLoader.parse("""
            time_zone: UTC
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            zones: [{ rows: [0, 5], senders: "*", rotate_seconds: 20 }]
            schedule:
              - { id: news, at: "05:00", dwell_seconds: 60, text: NEWS }
              - { id: quiet, at: "05:00", priority: idle, text: QUIET }
            """)
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let wall = Wall(config: config, drivers: [], logger: logger)
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: logger, now: { clock.now }) { _, _ in }
        await mailroom.take(own: config.schedule[1].message(at: clock.now, in: config.calendar))
        await mailroom.take(.new(person("hello", at: clock.now)))
        clock.advance(1)
        await mailroom.take(own: config.schedule[0].message(at: clock.now, in: config.calendar))
        var seen: [String] = []
        for _ in 0..<8 {
            seen.append(shows(wall))
            clock.advance(20)
            await mailroom.refresh()
        }
        // NEWS (newest) 60 s, HELLO 20 s, NEWS 60 s …; QUIET never, while others live.
        #expect(seen == ["NEWS", "NEWS", "NEWS", "HELLO", "NEWS", "NEWS", "NEWS", "HELLO"], "\(seen)")
    }

    @Test func aHoldKeepsItUpUntilRead() async throws {
        let clock = MailroomTests.Clock()
        let (mailroom, wall, config) = try mailroom("  - { id: news, at: \"05:00\", min_hold_seconds: 60, text: NEWS }", clock: clock)
        await mailroom.take(own: config.schedule[0].message(at: clock.now, in: config.calendar))
        clock.advance(10)
        await mailroom.take(.new(person("hello", at: clock.now)))
        #expect(shows(wall) == "NEWS")
        clock.advance(50)
        await mailroom.refresh()
        #expect(shows(wall) == "HELLO")
    }
}
