import Dispatch
import FlapCore
import Synchronization
import Testing
import TestWaits
import FlapClock
@testable import FlapTiming

/// Records every event; lets a test wait for a number of flips or for a settled transition.
final class Recorder: FlipObserver {
    let events = Mutex<[FlipEvent]>([])
    let settledFrames = Mutex<[(Int, Frame)]>([])
    let settledSignal = DispatchSemaphore(value: 0)
    let flipSignal = DispatchSemaphore(value: 0)

    func flip(_ event: FlipEvent) {
        events.withLock { $0.append(event) }
        flipSignal.signal()
    }

    func settled(board: Int, transition: Int, frame: Frame) {
        settledFrames.withLock { $0.append((transition, frame)) }
        settledSignal.signal()
    }

    /// Waits for the next settle (a generous bound only guards against a hang).
    func waitSettled() async -> Bool { await offPool { self.settledSignal.wait(timeout: .now() + 60) == .success } }
    func waitFlips(_ n: Int) async -> Bool { await offPool { (0..<n).allSatisfy { _ in self.flipSignal.wait(timeout: .now() + 60) == .success } } }
}

@Suite struct ConductorTests {
    let drum = Drum.standard
    let timing = FlipTiming(flipMs: 50, columnStaggerMs: 5, rowStaggerMs: 10)

    func indices(_ text: String) -> [UInt8] { text.map { UInt8(drum.index(of: Glyph(character: $0)!)!) } }

    @Test func firesEveryFlipAtItsPlannedInstant() async {
        let recorder = Recorder()
        let conductor = Conductor(boards: [.init(rows: 2, cols: 3, drum: drum, timing: timing, motion: .forward)],
                                  drivers: [recorder])
        _ = conductor.start()
        defer { conductor.stop() }
        let t = conductor.play(board: 0, target: indices("ABC D "))
        #expect(await recorder.waitSettled())
        let events = recorder.events.withLock { $0 }
        #expect(events.count == t.plan.flipCount)
        #expect(t.plan.flipCount == 1 + 2 + 3 + 4)
        for move in t.plan.moves {
            let mine = events.filter { $0.row == Int(move.row) && $0.col == Int(move.col) }
            #expect(mine.map(\.flip) == Array(0..<Int(move.flips)))
            #expect(mine.map(\.planned) == (0..<Int(move.flips)).map { t.start + move.clack($0, flip: timing.flip) })
            #expect(mine.map { Int(drum.index(of: $0.glyph)!) } == (1...Int(move.flips)).map { Int(move.from) + $0 })
            #expect(mine.allSatisfy { $0.actual >= $0.planned }, "never early")
        }
        #expect(conductor.frame(board: 0).glyphs.map(\.text).joined() == "ABC D ")
        #expect(recorder.settledFrames.withLock { $0.last?.1 } == conductor.frame(board: 0))
        #expect(conductor.lateness.count == events.count)
        #expect(conductor.lateness.early == 0)
    }

    @Test func aNewTargetReplansFromWhereModulesAre() async {
        let recorder = Recorder()
        let conductor = Conductor(boards: [.init(rows: 1, cols: 2, drum: drum, timing: timing, motion: .forward)],
                                  drivers: [recorder])
        _ = conductor.start()
        defer { conductor.stop() }
        conductor.play(board: 0, target: indices("ZZ"))
        #expect(await recorder.waitFlips(3))
        let second = conductor.play(board: 0, target: indices("CE"))
        // Wait for the settle of the second transition (the first never settles on its own).
        while recorder.settledFrames.withLock({ $0.last?.0 }) != second.number { #expect(await recorder.waitSettled()) }
        let events = recorder.events.withLock { $0 }
        for col in 0..<2 {
            let mine = events.filter { $0.col == col }
            let positions = mine.map { drum.index(of: $0.glyph)! }
            // Every flip advances exactly one flap: no jumps, no lost flips, never backwards.
            #expect(positions == (1...positions.count).map { $0 % drum.count })
            // One flip at a time: each starts after the previous ended.
            for (a, b) in zip(mine, mine.dropFirst()) { #expect(b.planned - a.planned >= timing.flip) }
        }
        #expect(conductor.frame(board: 0).glyphs.map(\.text).joined() == "CE")
        // Forward only: a module already past its new target went round the drum, never back.
        #expect(events.filter { $0.col == 0 }.count % drum.count == 3)
        #expect(events.filter { $0.col == 1 }.count % drum.count == 5)
    }

    /// A stop drops the flips a stop let run but the thread had not fired (a loaded machine):
    /// the board is then still, and the daemon can put it where its outputs left the modules.
    /// (Before, such a board stayed "moving" for ever and `restore` was refused: the state
    /// saved a flap behind the motors.)
    @Test func aStoppedConductorTakesTheOutputsPositions() async {
        let recorder = Recorder()
        let slow = FlipTiming(flipMs: 4000, columnStaggerMs: 0, rowStaggerMs: 0)
        let conductor = Conductor(boards: [.init(rows: 1, cols: 2, drum: drum, timing: slow, motion: .forward)],
                                  drivers: [recorder])
        _ = conductor.start()
        conductor.play(board: 0, target: indices("ZZ"))
        // Both first flips have begun (their 90° points are 2 s away): both are kept.
        #expect(conductor.finishFlipsInProgress() >= 1)
        conductor.stop()
        #expect(!conductor.isMoving(board: 0))
        conductor.restore(board: 0, positions: indices("BC"))
        #expect(conductor.frame(board: 0).glyphs.map(\.text).joined() == "BC")
    }

    @Test func nothingToDoSettlesAtOnce() async {
        let recorder = Recorder()
        let conductor = Conductor(boards: [.init(rows: 1, cols: 1, drum: drum, timing: timing, motion: .forward)],
                                  drivers: [recorder])
        _ = conductor.start()
        defer { conductor.stop() }
        let t = conductor.play(board: 0, target: [0])
        #expect(t.plan.moves.isEmpty)
        #expect(await recorder.waitSettled())
        #expect(recorder.events.withLock { $0.isEmpty })
    }

    @Test func realtimeRefusalIsAWarningNotAFailure() async {
        let conductor = Conductor(boards: [], drivers: [])
        let warnings = conductor.start(realtime: .init(priority: 99, lockMemory: false))
        conductor.stop()
        // As root SCHED_FIFO is granted; otherwise the refusal names what to grant.
        #expect(warnings.isEmpty || warnings[0].contains("LimitRTPRIO"))
    }
}

@Suite struct HistogramTests {
    @Test func percentiles() async {
        var h = LatenessHistogram()
        for us in 1...100 { h.record(Int64(us) * 1000) }
        h.record(-5)
        #expect(h.count == 101)
        #expect(h.percentileMicros(0.5) == 50)
        #expect(h.percentileMicros(0.99) == 99)
        #expect(h.summary.maxMicros == 100)
        #expect(h.early == 1)
        h.record(10_000_000_000)
        #expect(h.percentileMicros(1.0) == 49_999, "beyond 50 ms lands in the last bucket")
    }

    @Test func heapOrdersByInstant() async {
        var heap = MinHeap()
        for t in [5, 1, 9, 3, 7, 2] { heap.push(TimedFlip(instant: Int64(t), board: 0, module: 0, flip: 0, remaining: 0, direction: 1)) }
        heap.removeAll { $0.instant == 7 }
        var out: [Int64] = []
        while let f = heap.first { out.append(f.instant); heap.popFirst() }
        #expect(out == [1, 2, 3, 5, 9])
    }
}
