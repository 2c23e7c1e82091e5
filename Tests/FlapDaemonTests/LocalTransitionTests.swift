@testable import FlapBoard
@testable import FlapConfig
import FlapCore
@testable import FlapLocalAPI
@testable import FlapMessages
import FlapTerminal
import Foundation
import Logging
import Synchronization
import Testing
@testable import FlapDaemon

/// The plans a wall's conductor made, the last one last.
final class PlanRecorder: MovePlanSink {
    private let plans = Mutex<[FlipPlan]>([])
    var last: FlipPlan? { plans.withLock { $0.last } }
    func planned(board: Int, plan: FlipPlan, transitionStart: Int64) { plans.withLock { $0.append(plan) } }
    func finish(board: Int, at instant: Int64) {}
}

/// Issue 15, item 1: a local API body chooses its transition — Vestaboard's strategy, step size
/// and interval, or the app's names and speeds — and when it lands; the board's config chooses
/// its own.
@Suite struct LocalTransitionTests {
    func parse(_ s: String) -> Result<LocalPost, LocalAPIError> { LocalPost.parse(Data(s.utf8)) }
    let ms: Int64 = 1_000_000

    @Test func theFieldsOfAVestaboardBodyAndOfTheApp() throws {
        let vesta = try parse(#"{"characters": [[1]], "strategy": "edges-to-center", "step_size": 2, "step_interval_ms": 300}"#).get()
        #expect(vesta.message == .codes([[1]]))
        #expect(try vesta.transition.style() == TransitionStyle(order: .edgesToCenter, stepSize: 2, stepInterval: 300 * ms))
        let app = try parse(#"{"text": "hi", "transition": "curtain", "speed": "gentle", "arriveAt": "2026-11-26T18:00:00Z"}"#).get()
        #expect(try app.transition.style() == TransitionStyle(order: .edgesToCenter, stepInterval: 120 * ms, maxMoving: 12))
        #expect(app.arriveAt == 1_795_716_000)
        #expect(try parse(#"{"text": "hi", "arriveAt": 1795716000.5}"#).get().arriveAt == 1_795_716_000.5)
        #expect(try parse(#"{"text": "hi", "arriveAt": "2026-11-27T08:00:00+14:00"}"#).get().arriveAt == 1_795_716_000)
        #expect(try parse(#"{"text": "hi", "arriveAt": "2026-11-26T06:00:00-12:00"}"#).get().arriveAt == 1_795_716_000)
        #expect(try parse(#"{"text": "hi", "arriveAt": "2026-11-26T23:30:00+05:30"}"#).get().arriveAt == 1_795_716_000)
        #expect(try parse("[[1]]").get().transition.isEmpty)
    }

    @Test func wrongFieldsAreRefusedByName() {
        let cases: [(String, String)] = [
            (#"{"characters": [[1]], "strategy": "spiral"}"#, "strategy: 'spiral' is not one of classic, column, reverse-column, edges-to-center, row, diagonal, random"),
            (#"{"characters": [[1]], "strategy": "row", "step_size": 0}"#, "step_size: 0 is outside 1–132"),
            (#"{"characters": [[1]], "step_interval_ms": 5000}"#, "step_interval_ms: 5000 is outside 1–3000"),
            (#"{"characters": [[1]], "step_size": "2"}"#, "step_size is not a whole number"),
            (#"{"text": "hi", "arriveAt": "tomorrow"}"#, "arriveAt: 'tomorrow' is not an ISO 8601 instant such as 2026-11-26T18:00:00Z"),
            (#"{"text": "hi", "arriveAt": true}"#, "arriveAt is not an instant (ISO 8601 text, or seconds since 1970)"),
            // Issue 39: the formatter alone takes offsets no clock shows.
            (#"{"text": "hi", "arriveAt": "2026-11-26T18:00:00+99:00"}"#, "arriveAt: '2026-11-26T18:00:00+99:00' has no real UTC offset (Z, or −12:00 … +14:00)"),
            (#"{"text": "hi", "arriveAt": "2026-11-26T18:00:00-12:30"}"#, "arriveAt: '2026-11-26T18:00:00-12:30' has no real UTC offset (Z, or −12:00 … +14:00)"),
            (#"{"text": "hi", "arriveAt": "2026-11-26T18:00:00+05:60"}"#, "arriveAt: '2026-11-26T18:00:00+05:60' has no real UTC offset (Z, or −12:00 … +14:00)"),
            (#"{"text": "hi", "arriveAt": 1e12}"#, "arriveAt: 1000000000000.0 is not an instant between 1970 and 2100"),
        ]
        for (body, message) in cases { #expect(parse(body) == .failure(.badRequest(message)), "\(body)") }
    }

    @Test func aBoardsConfigSetsItsStyleAndNamesWhatIsWrong() throws {
        let config = try ConfigLoader.parse("""
            transition: wave
            boards:
              - { id: a }
              - { id: b, transition: { strategy: diagonal, step_size: 2, step_interval_ms: 90, max_moving: 30 } }
              - { id: c, transition: { style: together } }
            """)
        #expect(config.boards[0].transition == TransitionStyle(order: .column, stepInterval: 40 * ms))
        #expect(config.boards[1].transition == TransitionStyle(order: .diagonal, stepSize: 2, stepInterval: 90 * ms, maxMoving: 30))
        #expect(config.boards[2].transition.arrival == .together)
        let bad = [("transition: swirl", "transition"), ("boards: [{ transition: { style: wave, speed: slow } }]", "boards[0].transition.speed"),
                   ("boards: [{ transition: { strategy: row, step_size: 500 } }]", "boards[0].transition.step_size"),
                   ("boards: [{ transition: { stride: 2 } }]", "boards[0].transition.stride")]
        for (yaml, path) in bad {
            #expect(throws: (any Error).self, "\(yaml)") { try ConfigLoader.parse(yaml) }
            do { _ = try ConfigLoader.parse(yaml) } catch { #expect("\(error)".contains(path), "\(error)") }
        }
    }

    /// Through the mailroom to the conductor's plan, on a blank 1 × 4 board each time (the
    /// conductor is not started: plans are made, nothing plays).
    func posted(_ codes: String, how: (transition: TransitionFields?, arriveAt: Double?) = (nil, nil), now: Double = 1_800_000_000) async throws -> FlipPlan {
        let config = try ConfigLoader.parse("boards: [{ id: wall, rows: 1, cols: 4, timing: { flip_ms: 100 } }]\n")
        let wall = Wall(config: config, drivers: [], logger: Logger(label: "test"))
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: Logger(label: "test"), now: { now }) { _, _ in }
        return try #require(await mailroom.post(codes, type: .pattern, how: how)).transition.plan
    }

    @Test func aPostedStyleIsWhatTheConductorPlans() async throws {
        let reverse = try await posted("[[1,1,1,1]]", how: (TransitionFields(strategy: "reverse-column", stepIntervalMs: 30), nil))
        #expect(reverse.moves.map { $0.start / ms } == [90, 60, 30, 0])
        // Land 10 s from now: blank → C is 3 flips, → Z 26, → B 2, → A 1.
        let landing = try await posted("[[3,26,2,1]]", how: (nil, 1_800_000_010))
        #expect(landing.moves.map { $0.end(flip: 100 * ms) / ms } == [10_000, 10_000, 10_000, 10_000])
        #expect(landing.moves.map { $0.start / ms } == [9700, 7400, 9800, 9900])
        // An instant already past: the board's own style.
        #expect(try await posted("[[2,2,2,2]]", how: (nil, 1_799_999_000)).moves.map { $0.start / ms } == [0, 20, 40, 60])
        // No field: the board's own style (classic here).
        #expect(try await posted("[[2,2,2,2]]").moves.map { $0.start / ms } == [0, 20, 40, 60])
    }

    /// A held letter is shown early — by the longest way a module can go, and a second — so
    /// that every module lands on its unlock instant, not after it.
    @Test func aHeldLetterLandsOnItsUnlockInstant() async throws {
        let config = try ConfigLoader.parse("""
            message_api: { url: "http://127.0.0.1:9/", token: "t" }
            boards: [{ id: wall, rows: 1, cols: 3, drum: standard, timing: { flip_ms: 100 } }]
            """)
        let plans = PlanRecorder()
        let wall = Wall(config: config, drivers: [], planSinks: [plans], logger: Logger(label: "test"))
        let clock = MailroomTests.Clock()
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: Logger(label: "test"), now: { clock.now }) { _, _ in }
        // 39 flips of 100 ms at most on the 40-flap drum, and a second: shown from 4.9 s before.
        #expect(abs(Mailroom.lead(config.boards) - 4.9) < 1e-9)
        let unlock = clock.now + 60
        await mailroom.take(.new(InboxMessage(id: "h1", senderID: "s", senderName: "s", content: "AZ", sentAt: clock.now, unlockAt: unlock)))
        #expect(PlainFrame.rows(wall.target(board: 0)) == ["   "], "held")
        clock.advance(54.5)
        await mailroom.refresh()
        #expect(PlainFrame.rows(wall.target(board: 0)) == ["   "], "not yet within the lead")
        clock.advance(1)
        await mailroom.refresh()
        #expect(PlainFrame.rows(wall.target(board: 0)) == ["AZ "], "shown 4.5 s early")
        let plan = try #require(plans.last)
        // Lands 4.5 s after it was shown: A is 1 flip, Z 26.
        #expect(plan.moves.map { $0.end(flip: 100 * ms) / ms } == [4500, 4500])
        #expect(plan.moves.map { $0.start / ms } == [4400, 1900])
    }
}
