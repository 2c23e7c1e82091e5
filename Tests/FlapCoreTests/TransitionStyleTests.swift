import Testing
@testable import FlapCore

/// Issue 15, item 1: every transition style's start instants, against tables written out by hand
/// here (not computed by the planner's own arithmetic).
@Suite struct TransitionStyleTests {
    let ms: Int64 = 1_000_000
    let timing = FlipTiming(flip: 100_000_000, columnStagger: 20_000_000, rowStagger: 50_000_000)

    /// A rows × cols board from blank to `A` everywhere (one flip each), in `style`: each moving
    /// module's start in ms, as a grid.
    func starts(rows: Int, cols: Int, _ style: TransitionStyle) -> [[Int64]] {
        let plan = Planner.plan(rows: rows, cols: cols, from: Array(repeating: ModuleState(position: 0), count: rows * cols),
                                to: Array(repeating: 1, count: rows * cols), drum: .standard, timing: timing, motion: .forward, style: style)
        var grid = Array(repeating: Array(repeating: Int64(-1), count: cols), count: rows)
        for m in plan.moves { grid[Int(m.row)][Int(m.col)] = m.start / ms }
        return grid
    }

    @Test func eachStrategyStartsItsGroupsOneIntervalApart() {
        func style(_ order: TransitionStyle.Order, size: Int = 1) -> TransitionStyle {
            TransitionStyle(order: order, stepSize: size, stepInterval: 10 * ms)
        }
        #expect(starts(rows: 2, cols: 5, .classic) == [[0, 20, 40, 60, 80], [50, 70, 90, 110, 130]])
        #expect(starts(rows: 2, cols: 5, style(.column)) == [[0, 10, 20, 30, 40], [0, 10, 20, 30, 40]])
        #expect(starts(rows: 2, cols: 5, style(.column, size: 2)) == [[0, 0, 10, 10, 20], [0, 0, 10, 10, 20]])
        #expect(starts(rows: 2, cols: 5, style(.reverseColumn)) == [[40, 30, 20, 10, 0], [40, 30, 20, 10, 0]])
        #expect(starts(rows: 2, cols: 5, style(.edgesToCenter)) == [[0, 10, 20, 10, 0], [0, 10, 20, 10, 0]])
        #expect(starts(rows: 2, cols: 6, style(.edgesToCenter)) == [[0, 10, 20, 20, 10, 0], [0, 10, 20, 20, 10, 0]])
        #expect(starts(rows: 3, cols: 2, style(.row)) == [[0, 0], [10, 10], [20, 20]])
        #expect(starts(rows: 3, cols: 3, style(.diagonal)) == [[0, 10, 20], [10, 20, 30], [20, 30, 40]])
        #expect(starts(rows: 3, cols: 3, style(.diagonal, size: 2)) == [[0, 0, 10], [0, 10, 10], [10, 10, 20]])
    }

    @Test func randomIsAPermutationFixedByItsSeed() {
        let a = starts(rows: 2, cols: 3, TransitionStyle(order: .random, stepInterval: 10 * ms, seed: 7))
        #expect(a.flatMap { $0 }.sorted() == [0, 10, 20, 30, 40, 50], "one module a step: \(a)")
        #expect(starts(rows: 2, cols: 3, TransitionStyle(order: .random, stepInterval: 10 * ms, seed: 7)) == a)
        let others = (1...5).map { starts(rows: 2, cols: 3, TransitionStyle(order: .random, stepInterval: 10 * ms, seed: UInt64(100 + $0))) }
        #expect(others.contains { $0 != a }, "another seed, another order")
        let pairs = starts(rows: 2, cols: 3, TransitionStyle(order: .random, stepSize: 2, stepInterval: 10 * ms, seed: 7))
        #expect(pairs.flatMap { $0 }.sorted() == [0, 0, 10, 10, 20, 20])
    }

    /// Blank → A, C, Z on the forward-only 40-flap drum: 1, 3 and 26 flips of 100 ms.
    func landing(_ style: TransitionStyle, readyAt: [Int64] = [0, 0, 0]) -> (starts: [Int64], ends: [Int64]) {
        let plan = Planner.plan(rows: 1, cols: 3, from: readyAt.map { ModuleState(position: 0, readyAt: $0 * ms) }, to: [1, 3, 26],
                                drum: .standard, timing: timing, motion: .forward, style: style)
        return (plan.moves.map { $0.start / ms }, plan.moves.map { $0.end(flip: timing.flip) / ms })
    }

    @Test func togetherLandsEveryModuleOnOneInstant() {
        #expect(landing(.classic).starts == [0, 20, 40])
        #expect(landing(.classic).ends == [100, 320, 2640])
        let together = TransitionStyle(arrival: .together)
        #expect(landing(together).starts == [2500, 2300, 0])
        #expect(landing(together).ends == [2600, 2600, 2600])
        // The farthest module is still finishing a flip until 500 ms: everyone waits for it.
        #expect(landing(together, readyAt: [0, 0, 500]).starts == [3000, 2800, 500])
        // A module that is ready late but near lands with the rest.
        #expect(landing(together, readyAt: [2550, 0, 0]).starts == [2550, 2350, 50])
    }

    @Test func arrivalAtAnInstantStartsEachModuleEarlyByItsOwnTravel() {
        #expect(landing(TransitionStyle(arrival: .at(5000 * ms))).starts == [4900, 4700, 2400])
        #expect(landing(TransitionStyle(arrival: .at(5000 * ms))).ends == [5000, 5000, 5000])
        // Too soon for the farthest: as soon as every module can, together.
        #expect(landing(TransitionStyle(arrival: .at(1000 * ms))).starts == [2500, 2300, 0])
    }

    @Test func aCapOnMovingModulesHoldsTheRestUntilOneLands() {
        let capped = TransitionStyle(order: .column, stepInterval: 0, maxMoving: 2)
        #expect(starts(rows: 1, cols: 5, capped) == [[0, 0, 100, 100, 200]])
        #expect(starts(rows: 1, cols: 5, TransitionStyle(order: .column, stepInterval: 0)) == [[0, 0, 0, 0, 0]])
    }

    @Test func noStyleMovesAModuleWhoseFlapStays() {
        for order in TransitionStyle.Order.allCases {
            let plan = Planner.plan(rows: 1, cols: 3, from: [0, 5, 0].map { ModuleState(position: $0) }, to: [0, 5, 2], drum: .standard,
                                    timing: timing, motion: .forward, style: TransitionStyle(order: order, arrival: .together))
            #expect(plan.moves.map(\.col) == [2], "\(order)")
        }
    }

    @Test func fieldsMakeTheStyleOrNameWhatIsWrong() throws {
        let wave = try TransitionFields(transition: "wave", speed: "gentle").style()
        #expect(wave == TransitionStyle(order: .column, stepInterval: 120 * ms, maxMoving: 12))
        #expect(try TransitionFields(transition: "curtain").style().order == .edgesToCenter)
        #expect(try TransitionFields(transition: "drift", speed: "fast").style() == TransitionStyle(order: .reverseColumn, stepInterval: 40 * ms))
        #expect(try TransitionFields(transition: "together").style().arrival == .together)
        let vesta = try TransitionFields(strategy: "diagonal", stepSize: 3, stepIntervalMs: 250).style()
        #expect(vesta == TransitionStyle(order: .diagonal, stepSize: 3, stepInterval: 250 * ms))
        #expect(try TransitionFields().style(over: wave) == wave, "no field: the board's own")
        #expect(try TransitionFields(arrival: "together").style(over: wave).arrival == .together)
        let wrong: [(TransitionFields, String)] = [
            (TransitionFields(stepSize: 0), "step_size: 0 is outside 1–132"),
            (TransitionFields(stepSize: 133), "step_size: 133 is outside 1–132"),
            (TransitionFields(stepIntervalMs: 3001), "step_interval_ms: 3001 is outside 1–3000"),
            (TransitionFields(strategy: "spiral"), "strategy: 'spiral' is not one of classic, column, reverse-column, edges-to-center, row, diagonal, random"),
            (TransitionFields(transition: "swirl"), "transition: 'swirl' is not one of classic, curtain, drift, together, wave"),
            (TransitionFields(speed: "slow"), "speed: 'slow' is not gentle or fast"),
            (TransitionFields(arrival: "soon"), "arrival: 'soon' is not cascade or together"),
            (TransitionFields(strategy: "row", transition: "wave"), "strategy: give either strategy or transition, not both"),
        ]
        for (fields, message) in wrong {
            #expect(throws: TransitionFields.Invalid.self) { try fields.style() }
            do { _ = try fields.style() } catch { #expect(error.description == message) }
        }
    }
}
