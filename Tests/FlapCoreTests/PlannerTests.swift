import Testing
@testable import FlapCore

@Suite struct PlannerTests {
    let timing = FlipTiming()
    let ms: Int64 = 1_000_000

    func frame(_ rows: [String]) -> Frame {
        var f = Frame(rows: rows.count, cols: rows[0].count)
        for (r, line) in rows.enumerated() {
            for (c, ch) in line.enumerated() { f[r, c] = Glyph(character: ch)! }
        }
        return f
    }

    @Test func followsTheFormulaForEveryModule() {
        let from = frame(["      ", "      ", "      "])
        let to = frame(["HELLO ", "  A  Z", "+    0"])
        let plan = Planner.plan(from: from, to: to, drum: .standard, timing: timing, motion: .forward)!
        #expect(plan.moves.count == 9)
        for m in plan.moves {
            let target = to[Int(m.row), Int(m.col)]
            let n = Int32(Drum.standard.index(of: target)!)
            #expect(m.flips == n, "blank is index 0, so forward flips equal the target's index")
            #expect(m.start == Int64(m.col) * 20 * ms + Int64(m.row) * 50 * ms)
            #expect(m.end(flip: timing.flip) == m.start + Int64(n) * 120 * ms)
            for k in 0..<Int(m.flips) { #expect(m.clack(k, flip: timing.flip) == m.start + Int64(k) * 120 * ms + 60 * ms) }
            #expect(m.position(afterFlip: Int(m.flips) - 1, drumCount: 40) == Int(m.to))
        }
        // H at (0,0): 8 flips from 0 ms to 960 ms; + at (2,0): 39 flips from 100 ms.
        #expect(plan.moves[0].flips == 8 && plan.moves[0].start == 0)
        let plus = plan.moves.first { $0.row == 2 && $0.col == 0 }!
        #expect(plus.flips == 39 && plus.start == 100 * ms)
        #expect(plan.duration == 100 * ms + 39 * 120 * ms)
        #expect(plan.flipCount == plan.moves.reduce(0) { $0 + Int($1.flips) })
    }

    @Test func unchangedModulesDoNotMove() {
        let f = frame(["ABC"])
        let plan = Planner.plan(from: f, to: frame(["AXC"]), drum: .standard, timing: timing, motion: .forward)!
        #expect(plan.moves.map(\.col) == [1])
        #expect(Planner.plan(from: f, to: f, drum: .standard, timing: timing, motion: .forward)!.moves.isEmpty)
    }

    @Test func forwardWrapsAroundTheDrum() {
        // '+' is the last flap (39); A is 1: forward through blank, 2 flips.
        let plan = Planner.plan(from: frame(["+"]), to: frame(["A"]), drum: .standard, timing: timing, motion: .forward)!
        #expect(plan.moves[0].flips == 2 && plan.moves[0].direction == 1)
        // C → A forward takes 38 flips on a 40-flap drum.
        let back = Planner.plan(from: frame(["C"]), to: frame(["A"]), drum: .standard, timing: timing, motion: .forward)!
        #expect(back.moves[0].flips == 38)
    }

    @Test func shortestGoesBackwardWhenFewer() {
        let plan = Planner.plan(from: frame(["CA"]), to: frame(["AU"]), drum: .standard, timing: timing, motion: .shortest)!
        #expect(plan.moves[0].flips == 2 && plan.moves[0].direction == -1)
        #expect(plan.moves[0].position(afterFlip: 1, drumCount: 40) == 1)
        #expect(plan.moves[1].flips == 20 && plan.moves[1].direction == 1, "a tie goes forward")
    }

    @Test func readyModulesStartLate() {
        let states = [ModuleState(position: 0, readyAt: 500 * ms), ModuleState(position: 0, readyAt: 0)]
        let plan = Planner.plan(rows: 1, cols: 2, from: states, to: [3, 3], drum: .standard, timing: timing, motion: .forward)
        #expect(plan.moves.map(\.start) == [500 * ms, 20 * ms])
    }

    @Test func timingIsConfigurable() {
        let t = FlipTiming(flipMs: 50, columnStaggerMs: 0, rowStaggerMs: 10)
        let plan = Planner.plan(from: frame([" ", " "]), to: frame(["B", "B"]), drum: .standard, timing: t, motion: .forward)!
        #expect(plan.moves.map(\.start) == [0, 10 * ms])
        #expect(plan.moves[1].clack(1, flip: t.flip) == 10 * ms + 50 * ms + 25 * ms)
    }

    @Test func framesOffTheDrumAreRefused() {
        var f = Frame(rows: 1, cols: 1)
        f[0, 0] = Glyph(code: 63)!
        #expect(Planner.plan(from: Frame(rows: 1, cols: 1), to: f, drum: .standard, timing: timing, motion: .forward) == nil)
    }
}
