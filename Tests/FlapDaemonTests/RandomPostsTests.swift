@testable import FlapBoard
@testable import FlapConfig
import FlapCore
import FlapTerminal
import Foundation
import Logging
import Testing

/// Issue 39, item 3, through the door a local API post takes: random messages with random
/// transitions (every named style and strategy, both arrivals, a landing instant ahead) posted
/// at random intervals (seeded, so a failure names its case; 0–400 ms apart, most faster than a
/// transition plays) to a wall whose conductor plays in real time. Whatever came before, the
/// board ends on the last message, still. The wait for it is bounded (120 s) against a board
/// held still; the posting's pace is the property's input, not a synchronisation.
@Suite struct RandomPostsTests {
    static let config = "boards: [{ id: wall, rows: 2, cols: 8, timing: { flip_ms: 50 } }]\n"
    static let names = ["classic", "wave", "drift", "curtain", "together"]
    static let strategies = ["column", "reverse-column", "edges-to-center", "row", "diagonal", "random"]

    /// The transition a post asks for, drawn at random (nil: the board's own).
    static func fields(_ random: inout SeededRandom) -> TransitionFields? {
        switch random.next() % 4 {
        case 0: return nil
        case 1: return TransitionFields(transition: names[Int(random.next() % UInt64(names.count))],
                                        speed: random.next() % 2 == 0 ? "fast" : "gentle")
        case 2: return TransitionFields(strategy: strategies[Int(random.next() % UInt64(strategies.count))],
                                        stepSize: 1 + Int(random.next() % 3), stepIntervalMs: 1 + Int(random.next() % 200),
                                        arrival: random.next() % 2 == 0 ? "together" : "cascade")
        default: return TransitionFields(arrival: "together", maxMoving: 1 + Int(random.next() % 8))
        }
    }

    @Test(arguments: 0..<6) func randomPostsAtRandomIntervalsEndOnTheLastMessage(seed: UInt64) async throws {
        let config = try ConfigLoader.parse(Self.config)
        let watcher = SettleWatcher()
        let wall = Wall(config: config, drivers: [watcher], logger: Logger(label: "test"))
        _ = wall.conductor.start()
        defer { wall.conductor.stop() }
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: Logger(label: "test")) { board, transition in
            await watcher.wait(board: board, transition: transition)
        }
        var random = SeededRandom(seed: 0x3900_0000 + seed)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")
        var last: (text: String, frame: Frame, transition: Int)?
        for _ in 0..<(8 + Int(random.next() % 12)) {
            let text = String((0..<(1 + Int(random.next() % 16))).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
            let arriveAt = random.next() % 5 == 0 ? Date().timeIntervalSince1970 + Double(random.next() % 1500) / 1000 : nil
            let shown = try #require(await mailroom.post(text, type: .text, how: (Self.fields(&random), arriveAt)))
            last = (text, shown.frame, shown.transition.number)
            try await Task.sleep(for: .milliseconds(Int(random.next() % 400)))
        }
        let (text, frame, transition) = try #require(last)
        let settled = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await watcher.wait(board: 0, transition: transition); return true }
            group.addTask { try? await Task.sleep(for: .seconds(120)); return false }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        #expect(settled, "seed \(seed): the board did not settle on its last transition within 120 s")
        #expect(!wall.conductor.isMoving(board: 0), "seed \(seed)")
        #expect(wall.target(board: 0) == frame, "seed \(seed): the board's target is not the last post's frame")
        #expect(wall.conductor.frame(board: 0) == frame,
                "seed \(seed): shows \(PlainFrame.rows(wall.conductor.frame(board: 0))), the last post '\(text)' is \(PlainFrame.rows(frame))")
    }
}
