@testable import FlapBoard
@testable import FlapConfig
import FlapCore
import FlapNet
import FlapTerminal
import Foundation
import Logging
import Synchronization
import Testing
@testable import FlapDaemon

/// Issue 15, item 7: quiet hours for motion — messages held until the hours end (or shown
/// gently), `forced` going through, `/status` saying what waits — and every module's flips.
@Suite struct QuietHoursTests {
    final class Clock: Sendable {
        private let seconds = Mutex<Double>(1_800_000_000)
        var now: Double { seconds.withLock { $0 } }
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
    }

    /// "HH:MM" of the local minute `offset` minutes from `t`.
    static func clockTime(_ t: Double, plus offset: Int) -> String {
        let c = Calendar.current.dateComponents([.hour, .minute], from: Date(timeIntervalSince1970: t + Double(offset * 60)))
        return String(format: "%02d:%02d", c.hour!, c.minute!)
    }

    func mailroom(_ yaml: String, clock: Clock) throws -> (Mailroom, Wall) {
        let config = try ConfigLoader.parse(yaml)
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let wall = Wall(config: config, drivers: [], logger: logger)
        return (Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: logger, now: { clock.now }) { _, _ in }, wall)
    }

    func row(_ wall: Wall, _ r: Int = 2) -> String { PlainFrame.rows(wall.target(board: 0))[r].trimmingCharacters(in: .whitespaces) }

    @Test func theHoursSpanMidnightAndEndWhereTheySay() throws {
        let t = 1_800_000_000.0
        let q = QuietHours(from: 22 * 60, to: 7 * 60, messages: .hold)
        let midnight = Calendar.current.startOfDay(for: Date(timeIntervalSince1970: t)).timeIntervalSince1970
        #expect(q.holds(at: midnight + 23 * 3600) && q.holds(at: midnight + 3 * 3600))
        #expect(!q.holds(at: midnight + 7 * 3600) && !q.holds(at: midnight + 12 * 3600))
        #expect(q.end(after: midnight + 23 * 3600 + 30) == midnight + 31 * 3600, "from 23:00:30 to 07:00 the next day")
        #expect(!QuietHours(from: 600, to: 600, messages: .hold).holds(at: midnight + 600 * 60))
    }

    /// With `time_zone:`, quiet hours (of motion and of the clack) are read in that zone, as the
    /// schedule is, whatever the machine's zone.
    @Test func theHoursAreReadInTheConfigsTimeZone() throws {
        let config = try ConfigLoader.parse("""
            time_zone: Asia/Tokyo
            quiet_hours: { from: "22:00", to: "07:00" }
            sound: { quiet_hours: { from: "21:00", to: "08:00" } }
            """)
        let q = try #require(config.quietHours)
        // 2026-11-29 13:30 UTC is 22:30 in Tokyo: quiet there, whatever the machine's zone says.
        let t = ISO8601DateFormatter().date(from: "2026-11-29T13:30:00Z")!.timeIntervalSince1970
        #expect(q.holds(at: t) && !q.holds(at: t - 3600))
        #expect(q.end(after: t) == ISO8601DateFormatter().date(from: "2026-11-29T22:00:00Z")!.timeIntervalSince1970)
        #expect(config.sound.player.quiet.holds(at: t - 3600) && !config.sound.player.quiet.holds(at: t - 7200))
    }

    @Test func heldUntilTheHoursEndUnlessForced() async throws {
        let clock = Clock()
        let yaml = """
            quiet_hours: { from: "\(Self.clockTime(clock.now, plus: -30))", to: "\(Self.clockTime(clock.now, plus: 30))", messages: hold }
            """
        let (mailroom, wall) = try mailroom(yaml, clock: clock)
        let held = await mailroom.post("GOOD NIGHT", type: .text)
        #expect(held == nil && row(wall) == "", "the board does not move in quiet hours")
        let waiting = mailroom.waiting()
        #expect(waiting.count == 1 && waiting.first?.reason == .quietHours && waiting.first?.sender == "local")
        let until = try #require(mailroom.quietUntil)
        #expect(until > clock.now && until <= clock.now + 31 * 60)

        let forced = await mailroom.post("FIRE ALARM", type: .text, forced: true)
        #expect(forced != nil && row(wall) == "FIRE ALARM", "a forced message goes through")
        #expect(mailroom.waiting().isEmpty)

        _ = await mailroom.post("GOOD MORNING", type: .text)
        #expect(row(wall) == "FIRE ALARM")
        clock.advance(until - clock.now)
        await mailroom.refresh()
        #expect(row(wall) == "GOOD MORNING", "shown when the hours end")
        #expect(mailroom.quietUntil == nil && mailroom.waiting().isEmpty)
    }

    @Test func gentleHoursMoveAtMostTwelveModulesAtOnce() async throws {
        func mostMoving(_ shown: Wall.Shown?) -> Int {
            let moves = shown?.transition.plan.moves ?? []
            let flip = Int64(120_000_000)
            let instants = moves.map(\.start)
            return instants.map { t in moves.filter { $0.start <= t && t < $0.start + Int64($0.flips) * flip }.count }.max() ?? 0
        }
        let clock = Clock()
        let text = String(repeating: "ABCDEFGHIJK ", count: 11)
        let quiet = "quiet_hours: { from: \"\(Self.clockTime(clock.now, plus: -30))\", to: \"\(Self.clockTime(clock.now, plus: 30))\", messages: gentle }"
        let (gentle, _) = try mailroom(quiet, clock: clock)
        let (normal, _) = try mailroom("motion: forward", clock: clock)
        #expect(mostMoving(await gentle.post(text, type: .text)) <= 12)
        #expect(mostMoving(await normal.post(text, type: .text)) > 12)
        #expect(mostMoving(await gentle.post(text.lowercased() + "Z", type: .text, forced: true)) > 12, "forced: the board's own style")
    }

    @Test func quietHoursAreReadAndRefusedByName() {
        #expect((try? ConfigLoader.parse("quiet_hours: { from: \"22:00\", to: \"07:00\" }"))?.quietHours == QuietHours(from: 1320, to: 420, messages: .hold))
        do { _ = try ConfigLoader.parse("quiet_hours: { from: \"22:00\", to: \"07:00\", messages: snooze }"); Issue.record("accepted") } catch {
            #expect("\(error)".contains("quiet_hours.messages"), "\(error)")
        }
        do { _ = try ConfigLoader.parse("quiet_hours: { from: \"25:00\" }"); Issue.record("accepted") } catch {
            #expect("\(error)".contains("quiet_hours.from") && "\(error)".contains("quiet_hours.to"), "\(error)")
        }
    }

    @Test func everyModulesFlipsAreCountedAndKept() throws {
        let dir = NSTemporaryDirectory() + "flips-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func event(_ row: Int, _ col: Int) -> FlipEvent {
            FlipEvent(board: 0, row: row, col: col, flip: 0, glyph: .blank, transition: 1, transitionStart: 0, planned: 0, actual: 0)
        }
        do {
            let counter = FlipCounter(directory: dir, sizes: [(2, 3)])
            #expect(counter.isKept)
            for _ in 0..<5 { counter.flip(event(1, 2)) }
            counter.flip(event(0, 0))
            counter.flush()
            #expect(counter.counts(board: 0) == [[1, 0, 0], [0, 0, 5]])
        }
        #expect(FlipCounter(directory: dir, sizes: [(2, 3)]).counts(board: 0) == [[1, 0, 0], [0, 0, 5]], "kept across a restart")
        #expect(FlipCounter(directory: dir, sizes: [(3, 3)]).counts(board: 0) == Array(repeating: [0, 0, 0], count: 3), "other boards: from zero")
        #expect(!FlipCounter(directory: nil, sizes: [(1, 1)]).isKept)
    }
}
