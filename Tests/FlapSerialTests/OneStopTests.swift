@testable import FlapCore
import Testing
@testable import FlapSerial

/// Issue 12: the serial outputs follow the conductor's rule — a flip started by an instant
/// finishes, one not started is dropped — at a new plan and at a stop.
@Suite struct OneStopTests {
    let timing = FlipTiming(flipMs: 100, columnStaggerMs: 0, rowStaggerMs: 0)
    let t0: Int64 = 1_000_000_000_000

    func move(_ col: Int32, from: UInt8 = 0, to: UInt8, start: Int64) -> ModuleMove {
        ModuleMove(row: 0, col: col, from: from, to: to, flips: Int32(to - from), direction: 1, start: start)
    }

    /// The display showed ` ZZZZOKZZZZZ` where flapd said `     OK     `: a module that had not
    /// started towards Z, and stays blank in the new message, was still sent Z.
    @Test func anInterruptingPlanLeavesNoStaleTarget() {
        var queue = CascadeQueue(cols: 3)
        queue.replace(with: FlipPlan(rows: 1, cols: 3, drum: .standard, timing: timing,
                                     moves: [move(0, to: 26, start: 0), move(1, to: 26, start: 100_000_000), move(2, to: 26, start: 200_000_000)]),
                      transitionStart: t0)
        // 150 ms in: module 0 has started, 1 has too, 2 has not; the new plan moves only 1.
        queue.replace(with: FlipPlan(rows: 1, cols: 3, drum: .standard, timing: timing, moves: [move(1, from: 1, to: 15, start: 50_000_000)]),
                      transitionStart: t0 + 150_000_000)
        let sent = queue.take(by: .max).map { [$0.module, Int($0.flap)] }
        #expect(sent == [[0, 26], [1, 26], [1, 15]], "\(sent)")
    }

    @Test func aStopDropsTheTargetsOfMovesNotStarted() {
        var queue = CascadeQueue(cols: 3)
        queue.replace(with: FlipPlan(rows: 1, cols: 3, drum: .standard, timing: timing,
                                     moves: [move(0, to: 5, start: 0), move(1, to: 5, start: 100_000_000), move(2, to: 5, start: 200_000_000)]),
                      transitionStart: t0)
        queue.drop(after: t0 + 100_000_000)
        #expect(queue.take(by: .max).map(\.module) == [0, 1])
    }

    /// flapbus controllers move on their own from a MOVE: a stop sends each module still to
    /// start flips a MOVE to the flap its flip in progress ends on (the controller takes it
    /// from there, `hardware/flapbus.md`), one that has not started a MOVE to where it stands.
    @Test func aFlapbusStopTellsEachModuleTheFlapItsFlipInProgressEndsOn() {
        let link = FlapbusLink(open: { () throws(SerialError) -> any SerialTransport in throw SerialError(.find, "no port") })
        let driver = FlapbusDriver(board: 0, cols: 3, firstModule: 10, link: link)
        driver.planned(board: 0, plan: FlipPlan(rows: 1, cols: 3, drum: .standard, timing: timing,
                                                moves: [move(0, to: 10, start: 0), move(1, to: 4, start: 1_000_000_000), move(2, to: 2, start: 0)]),
                       transitionStart: t0)
        driver.finish(board: 0, at: t0 + 250_000_000)
        let told = link.lastMoves
        // Module 0: flips 0, 1, 2 have started (at 0, 100, 200 ms): it stops on flap 3.
        #expect(told[10] == Flapbus.Move(module: 10, flap: 3, startMicros: UInt64((t0 + 250_000_000) / 1000), flipMs: 100))
        // Module 1 had not started: it stays on flap 0.
        #expect(told[11]?.flap == 0 && told[11]?.startMicros == UInt64((t0 + 250_000_000) / 1000))
        // Module 2's two flips had both started: its move stands.
        #expect(told[12] == Flapbus.Move(module: 12, flap: 2, startMicros: UInt64(t0 / 1000), flipMs: 100))
    }

    /// A new plan that leaves a module out stops it too, as the conductor does.
    @Test func aFlapbusPlanStopsTheModulesItDoesNotMove() {
        let link = FlapbusLink(open: { () throws(SerialError) -> any SerialTransport in throw SerialError(.find, "no port") })
        let driver = FlapbusDriver(board: 0, cols: 2, link: link)
        driver.planned(board: 0, plan: FlipPlan(rows: 1, cols: 2, drum: .standard, timing: timing,
                                                moves: [move(0, to: 26, start: 0), move(1, to: 26, start: 500_000_000)]),
                       transitionStart: t0)
        driver.planned(board: 0, plan: FlipPlan(rows: 1, cols: 2, drum: .standard, timing: timing, moves: [move(0, from: 2, to: 15, start: 50_000_000)]),
                       transitionStart: t0 + 150_000_000)
        #expect(link.lastMoves[0]?.flap == 15 && link.lastMoves[1]?.flap == 0, "\(link.lastMoves)")
    }
}
