import FlapCore
import Synchronization
import Testing
import TestWaits
@testable import FlapTiming

/// An output that homes the modules it is told to and lands them when the test says (a driver's
/// sensors, in pure logic); it records the plans it was given.
final class HomingSink: MovePlanSink {
    let homes: Set<Int>
    let report = Mutex<(any HomingReport)?>(nil)
    let plans = Mutex<[FlipPlan]>([])
    init(homes: Set<Int>) { self.homes = homes }
    func planned(board: Int, plan: FlipPlan, transitionStart: Int64) { plans.withLock { $0.append(plan) } }
    func finish(board: Int, at instant: Int64) {}
    func home(board: Int, modules: [Int], report: any HomingReport) -> [Int] {
        self.report.withLock { $0 = report }
        return modules.filter(homes.contains)
    }
    func land(_ module: Int, on flap: Int?, passing flaps: Int) {
        report.withLock { $0 }?.landed(board: 0, module: module, flap: flap, flaps: flaps)
    }
}

/// Issue 34, item 2: homing is a transition on the conductor's timeline — the board moves until
/// every module has landed, each landing is a flip event (`homed`, with the flaps its turn
/// passed), and the board settles after the last.
@Suite struct ConductorHomingTests {
    let drum = Drum.standard
    let timing = FlipTiming(flipMs: 50, columnStaggerMs: 5, rowStaggerMs: 10)

    func indices(_ text: String) -> [UInt8] { text.map { UInt8(drum.index(of: Glyph(character: $0)!)!) } }

    @Test func eachLandingIsAnEventAndTheBoardSettlesAfterTheLast() async {
        let recorder = Recorder()
        let sink = HomingSink(homes: [0, 1])
        let conductor = Conductor(boards: [.init(rows: 1, cols: 3, drum: drum, timing: timing, motion: .forward)],
                                  drivers: [recorder], planSinks: [sink])
        _ = conductor.start()
        defer { conductor.stop() }
        // Module 2 has no sensor: only 0 and 1 home.
        #expect(conductor.home(board: 0) == 2)
        #expect(conductor.isMoving(board: 0))
        sink.land(0, on: 5, passing: 52)
        #expect(await eventually { recorder.events.withLock { $0.count } == 1 })
        #expect(conductor.isMoving(board: 0), "module 1 is still homing")
        // Module 1 found no magnet: it lands where it was, having passed nothing (faulty).
        sink.land(1, on: nil, passing: 0)
        #expect(await recorder.waitSettled())
        let events = recorder.events.withLock { $0 }
        #expect(events.map(\.col) == [0, 1] && events.allSatisfy(\.homed))
        #expect(events.map(\.flaps) == [52, 0])
        #expect(events.map { drum.index(of: $0.glyph)! } == [5, 0])
        #expect(!conductor.isMoving(board: 0))
        #expect(conductor.frame(board: 0).glyphs.map(\.text).joined() == "E  ")
        #expect(recorder.settledFrames.withLock { $0.map(\.0) } == [events[0].transition])
        // A landing nobody asked for (a module not homing) is not an event.
        sink.land(2, on: 9, passing: 40)
        #expect(conductor.home(board: 0, modules: []) == 0)
        #expect(recorder.events.withLock { $0.count } == 2)
    }

    /// A message during homing: the homing module fires no flip of the new plan (its output takes
    /// it to the new target as it lands), the others flip as usual, and the board settles once
    /// the landing is in — on the new target.
    @Test func aTargetDuringHomingPlansNoFlipForTheHomingModule() async {
        let recorder = Recorder()
        let sink = HomingSink(homes: [0])
        let conductor = Conductor(boards: [.init(rows: 1, cols: 2, drum: drum, timing: timing, motion: .forward)],
                                  drivers: [recorder], planSinks: [sink])
        _ = conductor.start()
        defer { conductor.stop() }
        #expect(conductor.home(board: 0, modules: [0]) == 1)
        let t = conductor.play(board: 0, target: indices("CC"))
        // The output still hears the homing module's move: it lands on the newest target.
        #expect(sink.plans.withLock { $0.last?.moves.map(\.col) } == [0, 1])
        #expect(await recorder.waitFlips(3))
        #expect(recorder.events.withLock { $0.allSatisfy { $0.col == 1 } })
        #expect(conductor.isMoving(board: 0))
        sink.land(0, on: 3, passing: 43)
        #expect(await eventually { recorder.settledFrames.withLock { $0.contains { $0.0 == t.number } } })
        #expect(conductor.frame(board: 0).glyphs.map(\.text).joined() == "CC")
        #expect(recorder.events.withLock { $0.filter { $0.col == 0 }.map(\.homed) } == [true])
    }

    /// Outputs that home nothing: the transition asked for settles at once; the board never moves.
    @Test func nothingToHomeSettlesAtOnce() {
        let recorder = Recorder()
        let conductor = Conductor(boards: [.init(rows: 1, cols: 2, drum: drum, timing: timing, motion: .forward)],
                                  drivers: [recorder], planSinks: [HomingSink(homes: [])])
        #expect(conductor.home(board: 0) == 0)
        #expect(!conductor.isMoving(board: 0))
        #expect(recorder.settledFrames.withLock { $0.count } == 1, "the transition the request opened is settled at once")
    }
}
