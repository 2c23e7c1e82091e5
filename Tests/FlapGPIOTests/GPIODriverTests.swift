@testable import FlapCore
import FlapWiring
import FlapClock
import FlapTiming
import Foundation
import Testing
import TestWaits
@testable import FlapGPIO

/// The driver's thread against a recording sink (the kernel's own lines are in the HIL test).
@Suite struct GPIODriverTests {
    @Test func everyStepOfThePlanIsOnePulseInCascadeOrder() async throws {
        let wiring = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1, 2, 3], dir: [4], enable: [5], pulseNanos: 100_000)))
        let geometry = StepGeometry(stepsPerRevolution: 200, flaps: 40)  // 5 steps a flip
        let sink = RecordingOutputs()
        let driver = GPIODriver(board: 0, rows: 1, cols: 3, wiring: wiring, geometry: geometry, outputs: sink)
        driver.start()
        defer { driver.stop() }
        let from = Frame(rows: 1, cols: 3), to = try Frame(codes: [[3, 1, 0]], rows: 1, cols: 3)
        let plan = Planner.plan(from: from, to: to, drum: .standard, timing: FlipTiming(flipMs: 50, columnStaggerMs: 30, rowStaggerMs: 0), motion: .forward)!
        driver.planned(board: 0, plan: plan, transitionStart: MonotonicClock.now())
        #expect(await eventually { driver.idle })
        let w = sink.recorded
        // Rising edges of each STEP line: 3 flips × 5 = 15 for column 0, 5 for column 1, none for 2.
        func rises(_ line: Int) -> [Int] { w.indices.filter { $0 > 0 && w[$0][line] && !w[$0 - 1][line] } }
        #expect(rises(0).count == 15 && rises(1).count == 5 && rises(2).isEmpty)
        // Column 0 starts first, 30 ms ahead; a driver thread woken more than that late (a
        // starved machine: stress-ng beside the suite) finds both due and steps them in the same
        // write — what it guarantees is the order, never column 1 before column 0.
        #expect(rises(0).first! <= rises(1).first!, "column 0 starts first")
        // DIR forward all along; ENABLE (active low) low while stepping, high again at the end.
        #expect(w.allSatisfy { $0[3] })
        #expect(!w[rises(0).first!][4] && w.last![4] && w.last!.prefix(3).allSatisfy { !$0 })
        #expect(driver.stats.steps == 20)
    }

    @Test func aNewPlanReplacesAModulesStepsFromItsNewStart() async throws {
        let wiring = GPIOWiring(chip: "c", kind: .unipolar(coils: [[1, 2, 3, 4]], halfStep: false))
        let sink = RecordingOutputs()
        let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring,
                                geometry: StepGeometry(stepsPerRevolution: 80, flaps: 40), outputs: sink)  // 2 steps a flip
        driver.start()
        defer { driver.stop() }
        let t0 = MonotonicClock.now() + 1_000_000_000
        let first = FlipPlan(rows: 1, cols: 1, drum: .standard, timing: FlipTiming(flipMs: 50, columnStaggerMs: 0, rowStaggerMs: 0),
                             moves: [ModuleMove(row: 0, col: 0, from: 0, to: 10, flips: 10, direction: 1, start: 0)])
        driver.planned(board: 0, plan: first, transitionStart: t0)
        // Before it starts, a new plan: 3 flips only (planned a nanosecond before t0: a flip that
        // starts at a plan's own instant counts as begun, as the conductor counts it).
        let second = FlipPlan(rows: 1, cols: 1, drum: .standard, timing: first.timing,
                              moves: [ModuleMove(row: 0, col: 0, from: 0, to: 3, flips: 3, direction: 1, start: 1)])
        driver.planned(board: 0, plan: second, transitionStart: t0 - 1)
        #expect(await eventually { driver.idle })
        #expect(driver.stats.steps == 6 && sink.recorded.last == [false, false, false, false], "released at the end")
    }

    /// Issue 12, one stop: SIGTERM's `finishFlipsInProgress` mid-transition — the conductor
    /// (what the saved state records) and the lines stop every module at the same flap. Before,
    /// the driver stepped its whole plan while the conductor stopped after the flip in progress.
    @Test func aStopLeavesEveryModuleWhereTheConductorSays() async throws {
        let wiring = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1, 2, 3], pulseNanos: 100_000)))
        let geometry = StepGeometry(stepsPerRevolution: 160, flaps: 40)  // 4 steps a flip
        let timing = FlipTiming(flipMs: 100, columnStaggerMs: 150, rowStaggerMs: 0)
        let sink = RecordingOutputs()
        let driver = GPIODriver(board: 0, rows: 1, cols: 3, wiring: wiring, geometry: geometry, flip: timing.flip, outputs: sink)
        let conductor = Conductor(boards: [.init(rows: 1, cols: 3, drum: .standard, timing: timing, motion: .forward)],
                                  drivers: [], planSinks: [driver])
        driver.start()
        _ = conductor.start()
        conductor.play(board: 0, target: [39, 39, 39])
        // The stop comes while flips are in progress: at once, off the pool (see `poll`).
        let (began, finished) = await offPool { (poll { driver.stats.steps >= 12 }, conductor.finishFlipsInProgress()) }
        #expect(began && finished > 0)
        #expect(await eventually { driver.idle && !conductor.isMoving(board: 0) })
        conductor.stop()
        driver.stop()
        let positions = conductor.frame(board: 0).glyphs.map { Drum.standard.index(of: $0)! }
        #expect(positions.contains { $0 < 39 }, "the stop came mid-transition: \(positions)")
        let w = [[false, false, false]] + sink.recorded  // the lines start low
        for m in 0..<3 {
            let rises = w.indices.filter { $0 > 0 && w[$0][m] && !w[$0 - 1][m] }.count
            #expect(rises == geometry.boundary(positions[m]), "module \(m): \(rises) steps, the conductor says flap \(positions[m])")
        }
    }

    /// A new plan replaces every module's flips not yet started, also of a module it does not
    /// move (it had not started and stays where it is), as the conductor does.
    @Test func aNewPlanDropsTheUnstartedFlipsOfModulesItDoesNotMove() async throws {
        let wiring = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1, 2], pulseNanos: 100_000)))
        let geometry = StepGeometry(stepsPerRevolution: 80, flaps: 40)  // 2 steps a flip
        let sink = RecordingOutputs()
        let driver = GPIODriver(board: 0, rows: 1, cols: 2, wiring: wiring, geometry: geometry, outputs: sink)
        driver.start()
        defer { driver.stop() }
        let timing = FlipTiming(flipMs: 50, columnStaggerMs: 0, rowStaggerMs: 0)
        let t0 = MonotonicClock.now() + 1_000_000_000
        // Both modules to flap 5, module 1 a minute late; then, before module 1 starts, a plan
        // that moves module 0 on and leaves module 1 where it is (at 0).
        driver.planned(board: 0, plan: FlipPlan(rows: 1, cols: 2, drum: .standard, timing: timing, moves: [
            ModuleMove(row: 0, col: 0, from: 0, to: 5, flips: 5, direction: 1, start: 0),
            ModuleMove(row: 0, col: 1, from: 0, to: 5, flips: 5, direction: 1, start: 60_000_000_000),
        ]), transitionStart: t0)
        driver.planned(board: 0, plan: FlipPlan(rows: 1, cols: 2, drum: .standard, timing: timing, moves: [
            ModuleMove(row: 0, col: 0, from: 0, to: 3, flips: 3, direction: 1, start: 1),
        ]), transitionStart: t0 - 1)
        #expect(await eventually { driver.idle })
        let w = [[false, false]] + sink.recorded
        func rises(_ line: Int) -> Int { w.indices.filter { $0 > 0 && w[$0][line] && !w[$0 - 1][line] }.count }
        #expect(rises(0) == 6 && rises(1) == 0)
    }

    /// Issue 12: a plan delivered late (its t0 already past, as on a starved machine) replaces
    /// flips the step thread has begun: the conductor counts them not started and plans from the
    /// flap they leave. Before, their steps were cut where they stood, the drum was left part-way
    /// and the new move, counted from the flap edge, landed off by those steps (module 0: 21 steps
    /// for flap 5, 20 expected). Now every module goes on from where its motor is: the steps
    /// already taken count towards the move (module 0), and a module the plan leaves still turns
    /// on round to the flap the plan says it is on (module 1, forward-only).
    @Test func aLatePlanTakesTheStepsAFlipHasBegunIntoAccount() async throws {
        let wiring = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1, 2], pulseNanos: 100_000)))
        let geometry = StepGeometry(stepsPerRevolution: 160, flaps: 40)  // 4 steps a flip
        let timing = FlipTiming(flipMs: 400, columnStaggerMs: 0, rowStaggerMs: 0)  // a step every 100 ms
        let sink = RecordingOutputs()
        let driver = GPIODriver(board: 0, rows: 1, cols: 2, wiring: wiring, geometry: geometry, flip: timing.flip, outputs: sink)
        driver.start()
        defer { driver.stop() }
        let t0 = MonotonicClock.now()
        driver.planned(board: 0, plan: FlipPlan(rows: 1, cols: 2, drum: .standard, timing: timing, moves: [
            ModuleMove(row: 0, col: 0, from: 0, to: 10, flips: 10, direction: 1, start: 0),
            ModuleMove(row: 0, col: 1, from: 0, to: 10, flips: 10, direction: 1, start: 0),
        ]), transitionStart: t0)
        // The third flip (from flap 2, at t0 + 800 ms) has begun on the lines of both modules…
        // …when a plan made at t0 + 700 ms arrives (before the flip ends: at once, off the pool):
        // then flap 2 was where both were going next.
        let began = await offPool {
            guard poll({ driver.stats.steps >= 18 }) else { return false }
            driver.planned(board: 0, plan: FlipPlan(rows: 1, cols: 2, drum: .standard, timing: timing, moves: [
                ModuleMove(row: 0, col: 0, from: 2, to: 5, flips: 3, direction: 1, start: 100_000_000),
            ]), transitionStart: t0 + 700_000_000)
            return true
        }
        #expect(began)
        #expect(await eventually { driver.idle })
        let w = [[false, false]] + sink.recorded
        func rises(_ line: Int) -> Int { w.indices.filter { $0 > 0 && w[$0][line] && !w[$0 - 1][line] }.count }
        #expect(rises(0) == geometry.boundary(5), "module 0: \(rises(0)) steps for flap 5")
        #expect(rises(1) % 160 == geometry.boundary(2) && rises(1) > geometry.boundary(2), "module 1: \(rises(1)) steps for flap 2")
        #expect(driver.flaps == [5, 2])
    }

    /// Issue 12: a 28BYJ-48's rotor stands at the coil pattern last energised, so a restart goes
    /// on from it. Before, every start began the sequence again at its first pattern: a module
    /// stopped 6 half-steps in was next energised 3 patterns away from its rotor — a jerk and
    /// steps lost or gained on the wall.
    @Test func aRestartGoesOnFromTheCoilPatternTheRotorStandsAt() async throws {
        let path = NSTemporaryDirectory() + "steps-\(UUID().uuidString).bin"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let wiring = GPIOWiring(chip: "c", kind: .unipolar(coils: [[1, 2, 3, 4]], halfStep: true))
        let geometry = StepGeometry(stepsPerRevolution: 80, flaps: 40)  // 2 half-steps a flip
        let timing = FlipTiming(flipMs: 20, columnStaggerMs: 0, rowStaggerMs: 0)
        func run(from: UInt8, flips: UInt8) async throws -> [[Bool]] {
            let sink = RecordingOutputs()
            let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: geometry, flip: timing.flip, outputs: sink)
            driver.attach(journal: try #require(StepJournal(path: path, modules: 1, stepsPerRevolution: 80)))
            driver.start(positions: [from])
            let plan = FlipPlan(rows: 1, cols: 1, drum: .standard, timing: timing,
                                moves: [ModuleMove(row: 0, col: 0, from: from, to: from + flips, flips: Int32(flips), direction: 1, start: 0)])
            driver.planned(board: 0, plan: plan, transitionStart: MonotonicClock.now())
            #expect(await eventually { driver.idle })
            driver.stop()
            var patterns: [[Bool]] = []
            for w in sink.recorded where w != [false, false, false, false] && patterns.last != w { patterns.append(w) }
            return patterns
        }
        let sequence = GPIOWiring.halfStep
        #expect(try await run(from: 0, flips: 3) == Array(sequence[1...6]))
        // The journal knows the rotor is at pattern 6: the next steps are 7 and 0.
        #expect(try await run(from: 3, flips: 1) == [sequence[7], sequence[0]])
    }

    /// A kill between a coil motor's step store and its write (CI, stop 50) leaves its rotor at
    /// the journal's pattern or the one before. The restart energises the journal's pattern
    /// again — the rotor goes there either way — and then on to the flap's edge; the journal
    /// stays in flight until that write is made. Not in flight: on from the pattern.
    @Test func aCoilMotorCaughtInFlightIsSteppedAgainToTheJournalsPattern() async throws {
        let wiring = GPIOWiring(chip: "c", kind: .unipolar(coils: [[1, 2, 3, 4]], halfStep: true))
        let sequence = GPIOWiring.halfStep
        func restart(inFlight: Bool) async throws -> (patterns: [[Bool]], flaps: [Int?], journal: ([Int?]?, Set<Int>)) {
            let path = NSTemporaryDirectory() + "steps-\(UUID().uuidString).bin"
            defer { try? FileManager.default.removeItem(atPath: path) }
            do {
                let before = try #require(StepJournal(path: path, modules: 1, stepsPerRevolution: 80))
                before.set(0, 5, phase: 5, inFlight: inFlight)  // half-way from flap 2 (4) to flap 3 (6)
            }
            let sink = RecordingOutputs()
            let driver = GPIODriver(board: 0, rows: 1, cols: 1, wiring: wiring, geometry: StepGeometry(stepsPerRevolution: 80, flaps: 40),
                                    flip: 20_000_000, outputs: sink)
            driver.attach(journal: try #require(StepJournal(path: path, modules: 1, stepsPerRevolution: 80)))
            driver.start(positions: [0])
            #expect(await eventually { driver.idle })
            driver.stop()
            var patterns: [[Bool]] = []
            for w in sink.recorded where w != [false, false, false, false] && patterns.last != w { patterns.append(w) }
            let after = try #require(StepJournal(path: path, modules: 1, stepsPerRevolution: 80))
            return (patterns, driver.flaps, (after.restored, after.restoredInFlight))
        }
        let caught = try await restart(inFlight: true)
        #expect(caught.patterns == [sequence[5], sequence[6]] && caught.flaps == [3])
        #expect(caught.journal.0 == [6] && caught.journal.1.isEmpty)
        let known = try await restart(inFlight: false)
        #expect(known.patterns == [sequence[6]] && known.flaps == [3])
        #expect(known.journal.0 == [6] && known.journal.1.isEmpty)
    }

    /// Under load the step thread wakes late, and a module's last step and its release come due
    /// in the same round. Before, both went out at once: the drivers were disabled with the last
    /// STEP pulse still high (the CI's HIL test caught a STEP high while ENABLE was off under
    /// stress-ng), and a coil motor was released in the write after its last pattern, before its
    /// rotor could follow. A plan that started 10 s ago makes every instant late at once.
    @Test func aLateLastStepIsHeldBeforeTheModuleIsReleased() async throws {
        let wiring = GPIOWiring(chip: "c", kind: .stepDir(.init(step: [1, 2], dir: [3], enable: [4], pulseNanos: 100_000)))
        let geometry = StepGeometry(stepsPerRevolution: 200, flaps: 40)  // 5 steps a flip
        let sink = RecordingOutputs()
        let driver = GPIODriver(board: 0, rows: 1, cols: 2, wiring: wiring, geometry: geometry, outputs: sink)
        driver.start()
        defer { driver.stop() }
        let from = Frame(rows: 1, cols: 2), to = try Frame(codes: [[2, 1]], rows: 1, cols: 2)
        let plan = Planner.plan(from: from, to: to, drum: .standard, timing: FlipTiming(flipMs: 50, columnStaggerMs: 30, rowStaggerMs: 0), motion: .forward)!
        driver.planned(board: 0, plan: plan, transitionStart: MonotonicClock.now() - 10_000_000_000)
        #expect(await eventually { driver.idle })
        let w = sink.recorded
        func rises(_ line: Int) -> Int { w.indices.filter { $0 > 0 && w[$0][line] && !w[$0 - 1][line] }.count }
        #expect(rises(0) == 10 && rises(1) == 5)
        // ENABLE (line 4, active low) is on whenever a STEP line is high.
        #expect(w.filter { $0[0] || $0[1] }.allSatisfy { !$0[3] }, "\(w)")
        #expect(w.last![3] && !w.last![0] && !w.last![1], "disabled at the end, every pulse ended")
    }
}
