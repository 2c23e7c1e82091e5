@testable import FlapBoard
@testable import FlapConfig
import FlapCore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
@testable import FlapDaemon

/// Issue 13, item 2: the daemon's parts as services of one group — started in order, each once
/// the one before has started; stopped in reverse; and no lock held while the wall calls out.
@Suite struct DaemonPartTests {
    /// Records what the parts did, in order.
    final class Record: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// A part that takes its time to start (yields many times, as a part waiting on a thread
    /// does), and can fail to start.
    struct Recorded: DaemonPart {
        let name: String
        let record: Record
        var fails = false

        struct Failed: Error {}

        func start() async throws {
            record.add("\(name) starting")
            for _ in 0..<200 { await Task.yield() }
            if fails { throw Failed() }
            record.add("\(name) started")
        }

        func stop() async { record.add("\(name) stopped") }
    }

    /// Ends at once, which shuts the group down.
    struct Ends: Service {
        let record: Record
        func run() async { record.add("ends") }
    }

    @Test func partsStartInOrderEachAfterTheOneBeforeAndStopInReverse() async throws {
        let record = Record()
        let members: [ServiceGroup.Member] = ["a", "b", "c"].map { .part(Recorded(name: $0, record: record)) }
            + [.service("ends", Ends(record: record))]
        try await ServiceGroup.inOrder(members, logger: Logger(label: "test")).run()
        #expect(record.all == ["a starting", "a started", "b starting", "b started", "c starting", "c started", "ends",
                               "c stopped", "b stopped", "a stopped"])
    }

    @Test func aPartThatFailsToStartStopsThoseBeforeItAndStartsNoneAfter() async throws {
        let record = Record()
        let members: [ServiceGroup.Member] = [
            .part(Recorded(name: "a", record: record)), .part(Recorded(name: "b", record: record, fails: true)),
            .part(Recorded(name: "c", record: record)), .service("ends", Ends(record: record)),
        ]
        await #expect(throws: Recorded.Failed.self) { try await ServiceGroup.inOrder(members, logger: Logger(label: "test")).run() }
        #expect(record.all == ["a starting", "a started", "b starting", "a stopped"])
    }

    /// A flip observer that reads the wall from its callback — the conductor calls `settled` from
    /// inside `play` when nothing moves. Read on another thread, so a lock still held is a wait
    /// that runs out (bounded generously), not a hang.
    final class ReadsTheWall: FlipObserver {
        let wall = Mutex<Wall?>(nil)
        let reads = Mutex<[Bool]>([])
        func flip(_ event: FlipEvent) {}
        func settled(board: Int, transition: Int, frame: Frame) {
            guard let wall = wall.withLock({ $0 }) else { return }
            let done = DispatchSemaphore(value: 0)
            Thread { _ = wall.target(board: board); done.signal() }.start()
            let read = done.wait(timeout: .now() + 60) == .success
            reads.withLock { $0.append(read) }
        }
    }

    @Test func theWallHoldsNoLockWhileTheConductorCallsOut() throws {
        let config = try ConfigLoader.parse("boards: [{ id: wall }]")
        let observer = ReadsTheWall()
        let wall = Wall(config: config, drivers: [observer], logger: Logger(label: "test"))
        observer.wall.withLock { $0 = wall }
        let blank = wall.target(board: 0)
        _ = wall.show(frame: blank, board: 0)  // nothing moves: settled from inside play
        #expect(observer.reads.withLock { $0 } == [true], "the wall's targets were locked while the conductor called out")
    }
}
