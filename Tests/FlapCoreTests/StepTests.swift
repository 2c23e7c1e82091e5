import Testing
@testable import FlapCore

@Suite struct StepGeometryTests {
    @Test func boundariesDoNotAccumulateError() {
        let g = StepGeometry(stepsPerRevolution: 2048, flaps: 40)
        let perFlip = (0..<40).map { g.steps(fromFlap: $0) }
        #expect(Set(perFlip) == [51, 52] && perFlip.reduce(0, +) == 2048)
        #expect(g.boundary(40) == 2048 && g.boundary(400) == 20_480 && g.boundary(41) == 2048 + g.boundary(1))
        #expect(g.boundary(1) == 51 && g.boundary(2) == 102 && g.boundary(3) == 154)  // 51.2, 102.4, 153.6 rounded
    }

    @Test func stepsSpreadOverEachFlip() {
        let g = StepGeometry(stepsPerRevolution: 200, flaps: 50)  // 4 steps a flip
        let m = ModuleMove(row: 0, col: 0, from: 49, to: 1, flips: 2, direction: 1, start: 1_000)
        #expect(g.stepInstants(of: m, flip: 120) == [1_000, 1_030, 1_060, 1_090, 1_120, 1_150, 1_180, 1_210])
    }

    @Test func aRampedFirstFlipStillEndsOnTime() {
        let g = StepGeometry(stepsPerRevolution: 400, flaps: 40, rampSteps: 4)  // 10 steps a flip
        let m = ModuleMove(row: 0, col: 0, from: 0, to: 2, flips: 2, direction: 1, start: 0)
        let t = g.stepInstants(of: m, flip: 120_000_000)
        let gaps = zip(t, t.dropFirst()).map { $1 - $0 }
        #expect(t.count == 20 && t[10] == 120_000_000, "the second flip starts on time")
        #expect(gaps[0] > gaps[1] && gaps[1] > gaps[2] && gaps[2] > gaps[3] && gaps[3] > gaps[4], "\(gaps)")
        #expect(Set(gaps[4..<9]).count <= 2, "cruise after the ramp: \(gaps)")
    }
}

@Suite struct PowerBudgetTests {
    let flip: Int64 = 100

    /// The most modules of `group` turning at any instant of a plan.
    func peak(_ moves: [ModuleMove], in group: PowerGroup) -> Int {
        let spans = moves.filter { group.contains(row: Int($0.row), col: Int($0.col)) }.map { ($0.start, $0.end(flip: flip)) }
        return PowerBudget.peak(spans, from: 0, to: .max)
    }

    @Test func theCascadeStretchesToKeepEachGroupUnderItsLimit() {
        let timing = { (groups: [PowerGroup]) in
            var t = FlipTiming(flip: 100, columnStagger: 10, rowStagger: 50); t.powerGroups = groups; return t
        }
        let groups = [PowerGroup(rows: 0...1, cols: 0...3, maxMoving: 3), PowerGroup(rows: 2...2, cols: 0...3, maxMoving: 1)]
        let states = Array(repeating: ModuleState(position: 0), count: 12)
        let free = Planner.plan(rows: 3, cols: 4, from: states, to: Array(repeating: 3, count: 12), drum: .standard, timing: timing([]), motion: .forward)
        let held = Planner.plan(rows: 3, cols: 4, from: states, to: Array(repeating: 3, count: 12), drum: .standard, timing: timing(groups), motion: .forward)
        #expect(peak(free.moves, in: groups[0]) == 8 && peak(free.moves, in: groups[1]) == 4)
        #expect(peak(held.moves, in: groups[0]) == 3 && peak(held.moves, in: groups[1]) == 1)
        // Nobody starts before the cascade said, flips keep their count, the row of one goes in turn.
        #expect(zip(free.moves, held.moves).allSatisfy { $1.start >= $0.start && $1.flips == $0.flips })
        #expect(held.moves.filter { $0.row == 2 }.map(\.start) == [100, 400, 700, 1000])
        #expect(held.duration > free.duration)
    }

    @Test func aModuleFinishingAFlipCountsUntilItEnds() {
        let moves = [ModuleMove(row: 0, col: 1, from: 0, to: 1, flips: 1, direction: 1, start: 0)]
        let group = PowerGroup(rows: 0...0, cols: 0...1, maxMoving: 1)
        let out = PowerBudget.apply(moves, groups: [group], flip: flip, busy: [(0, 0, 60)])
        #expect(out[0].start == 60)
    }
}

@Suite struct FinishingAFlipTests {
    /// Where a drum caught between two flaps stands once it finishes its flip (issue 12).
    @Test func aPlaceBetweenTwoEdgesFinishesOnTheNextFlap() {
        let g = StepGeometry(stepsPerRevolution: 2048, flaps: 40)  // edges at round(k · 51.2)
        #expect(g.flap(finishing: 0) == (0, 0))
        #expect(g.flap(finishing: 51) == (1, 0))
        #expect(g.flap(finishing: 52) == (2, 50))
        #expect(g.flap(finishing: 2047) == (0, 1), "the last flap's edge is flap 0's, a turn on")
    }
}
