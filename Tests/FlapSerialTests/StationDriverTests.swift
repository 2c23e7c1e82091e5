@testable import FlapCore
import FlapClock
import FlapTiming
import Foundation
import Synchronization
import FlapSerialTesting
import Testing
import TestWaits
@testable import FlapSerial

/// Salvaged station modules on a pty: the bytes read back by the independent decoders.
@Suite struct StationDriverTests {
    func move(col: Int32, to: UInt8, startMs: Int64) -> ModuleMove {
        ModuleMove(row: 0, col: col, from: 0, to: to, flips: Int32(to), direction: 1, start: startMs * 1_000_000)
    }

    func plan(_ moves: [ModuleMove]) -> FlipPlan {
        FlipPlan(rows: 1, cols: 4, drum: .standard, timing: FlipTiming(), moves: moves)
    }

    /// Polls `condition` for up to 120 s (a bound against a hang, not a timing check).

    @Test func kroneSetsEachModulesCodeThenSetAllInCascadeOrder() async throws {
        let peer = try StationPeer()
        let addresses: [UInt8] = [10, 11, 200, 13]
        let driver = StationDriver(board: 0, cols: 4, addresses: addresses, bus: .krone, open: { peer.host! })
        driver.start(positions: [0, 0, 5, 0])
        defer { driver.stop() }
        // On opening, every module is sent where it should be, then SET_ALL.
        let first = addresses.enumerated().map { Independent.StationCommand(command: 8, address: Int($1), value: $0 == 2 ? 5 : 0) }
            + [Independent.StationCommand(command: 1)]
        #expect(await eventually { Independent.krone(peer.received.withLock { $0 }).count >= 5 })
        #expect(Array(Independent.krone(peer.received.withLock { $0 }).prefix(5)) == first)
        // Columns 1 and 2 fall due together, after column 3 and before column 0.
        driver.planned(board: 0, plan: plan([move(col: 0, to: 130, startMs: 90), move(col: 1, to: 7, startMs: 40),
                                         move(col: 2, to: 9, startMs: 40), move(col: 3, to: 3, startMs: 0)]),
                       transitionStart: MonotonicClock.now())
        driver.planned(board: 1, plan: plan([move(col: 0, to: 1, startMs: 0)]), transitionStart: 0)  // another board's
        #expect(await eventually { Independent.krone(peer.received.withLock { $0 }).count >= 5 + 4 + 2 })
        let after = Array(Independent.krone(peer.received.withLock { $0 }).dropFirst(5))
        let codes = after.filter { $0.command == 8 }.map { [$0.address!, $0.value!] }
        #expect(codes == [[13, 3], [11, 7], [200, 9], [10, 130]] || codes == [[13, 3], [200, 9], [11, 7], [10, 130]], "\(after)")
        // Modules due at one instant are never split by a SET_ALL; the last command starts them.
        let index = { (a: Int) in after.firstIndex { $0.address == a }! }
        #expect(!after[min(index(11), index(200))...max(index(11), index(200))].contains { $0.command == 1 }, "\(after)")
        #expect(after.last == Independent.StationCommand(command: 1) && after.count <= 4 + 3)
        #expect(driver.counters.messages == after.count + 5 && driver.counters.connected)
    }

    @Test func omegaResendsEveryPositionWhenThePortComesBack() async throws {
        let first = try StationPeer(), second = try StationPeer()
        let ports = Mutex<[StationPeer]>([first, second])
        let driver = StationDriver(board: 0, cols: 3, addresses: [1, 2, 3], bus: .omega, open: { () throws(SerialError) -> any SerialTransport in
            guard let p = ports.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { throw SerialError(.find, "no such port") }
            return p.host!
        })
        driver.start(positions: nil)
        defer { driver.stop() }
        #expect(await eventually { Independent.omega(first.received.withLock { $0 }).count == 3 })
        driver.planned(board: 0, plan: plan([move(col: 1, to: 17, startMs: 0)]), transitionStart: MonotonicClock.now())
        #expect(await eventually { Independent.omega(first.received.withLock { $0 }).count == 4 })
        #expect(Independent.omega(first.received.withLock { $0 }).last == .init(command: 0xC0, address: 2, value: 17))
        first.hangUp()
        // The second port is sent every module's position, the moved one's included.
        #expect(await eventually { Independent.omega(second.received.withLock { $0 }).count == 3 })
        #expect(Independent.omega(second.received.withLock { $0 }) == [1, 2, 3].map { .init(command: 0xC0, address: $0, value: $0 == 2 ? 17 : 0) })
        let c = driver.counters
        #expect(c.disconnects == 1 && c.resyncs == 1 && c.messages == 7 && c.bytes == 28, "\(c)")
    }

    @Test func theIndependentDecodersReadTheAnchorsExamples() async {
        // Written from anchors.md by hand: SET_CODE to module 200 (over 127) with code 130 (over 127).
        #expect(Independent.krone([0b1111_1000, 72, 2, 0b1001_0001]) == [.init(command: 8, address: 200, value: 130), .init(command: 1)])
        #expect(Independent.omega([0xFF, 0xC0, 0xFF, 0xFF, 0xFF, 0xD0, 9]) == [.init(command: 0xC0, address: 255, value: 255), .init(command: 0xD0, address: 9)])
    }
}
