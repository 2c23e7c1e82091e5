import Testing
@testable import FlapCore

/// Issue 38, item 4: boards of a grid play one transition — each module's instant is its place
/// in the grid's order, against tables written out by hand here.
@Suite struct GridCascadeTests {
    let ms: Int64 = 1_000_000
    let timing = FlipTiming(flip: 100_000_000, columnStagger: 20_000_000, rowStagger: 50_000_000)

    /// A 2 × 3 board at `place` from blank to `A` everywhere: each module's start in ms.
    func starts(_ style: TransitionStyle, place: GridPlace?) -> [[Int64]] {
        let plan = Planner.plan(rows: 2, cols: 3, from: Array(repeating: ModuleState(position: 0), count: 6), to: Array(repeating: 1, count: 6),
                                drum: .standard, timing: timing, motion: .forward, style: style, place: place)
        var grid = Array(repeating: Array(repeating: Int64(-1), count: 3), count: 2)
        for m in plan.moves { grid[Int(m.row)][Int(m.col)] = m.start / ms }
        return grid
    }

    @Test func theCascadeRunsOnIntoTheBoardToTheRightAndBelow() {
        // On its own, and as the left board of a 2 × 6 grid: its own cascade.
        #expect(starts(.classic, place: nil) == [[0, 20, 40], [50, 70, 90]])
        #expect(starts(.classic, place: GridPlace(row: 0, col: 0, rows: 2, cols: 6)) == [[0, 20, 40], [50, 70, 90]])
        // The right board: on from column 3 (60 ms), not from 0.
        #expect(starts(.classic, place: GridPlace(row: 0, col: 3, rows: 2, cols: 6)) == [[60, 80, 100], [110, 130, 150]])
        // Below the left one in a 4 × 6 grid: on from row 2 (100 ms).
        #expect(starts(.classic, place: GridPlace(row: 2, col: 0, rows: 4, cols: 6)) == [[100, 120, 140], [150, 170, 190]])
    }

    @Test func everyOrderCountsTheGridsColumnsAndRows() {
        let right = GridPlace(row: 0, col: 3, rows: 2, cols: 6)
        func style(_ order: TransitionStyle.Order) -> TransitionStyle { TransitionStyle(order: order, stepInterval: 10 * ms) }
        #expect(starts(style(.column), place: right) == [[30, 40, 50], [30, 40, 50]])
        #expect(starts(style(.reverseColumn), place: right) == [[20, 10, 0], [20, 10, 0]], "from the grid's right edge")
        #expect(starts(style(.edgesToCenter), place: right) == [[20, 10, 0], [20, 10, 0]])
        #expect(starts(style(.row), place: GridPlace(row: 2, col: 0, rows: 4, cols: 6)) == [[20, 20, 20], [30, 30, 30]])
        #expect(starts(style(.diagonal), place: right) == [[30, 40, 50], [40, 50, 60]])
        // Random: the grid's one shuffle, each board its part of it — the two halves together
        // take every step of 0…11 once.
        let seeded = TransitionStyle(order: .random, stepInterval: 10 * ms, seed: 7)
        let left = starts(seeded, place: GridPlace(row: 0, col: 0, rows: 2, cols: 6))
        let steps = (left + starts(seeded, place: right)).joined().map { $0 / 10 }
        #expect(steps.sorted() == Array(0...11))
    }
}
