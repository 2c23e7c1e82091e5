/// A rectangle of modules that share a power supply: at most `maxMoving` of them turn at once.
public struct PowerGroup: Hashable, Sendable {
    public var rows: ClosedRange<Int>
    public var cols: ClosedRange<Int>
    public var maxMoving: Int

    public init(rows: ClosedRange<Int>, cols: ClosedRange<Int>, maxMoving: Int) {
        self.rows = rows; self.cols = cols; self.maxMoving = maxMoving
    }

    public func contains(row: Int, col: Int) -> Bool { rows.contains(row) && cols.contains(col) }
}

/// Stretches a plan's cascade so that no power group ever has more than its `maxMoving`
/// modules turning at once: taken in cascade order, a module that would overload a group starts
/// when enough of the group's earlier modules have finished. Its flips keep their interval.
enum PowerBudget {
    /// `busy`: modules not in `moves` still finishing a flip until that instant (they count too).
    static func apply(_ moves: [ModuleMove], groups: [PowerGroup], flip: Int64,
                      busy: [(row: Int, col: Int, until: Int64)] = []) -> [ModuleMove] {
        guard !groups.isEmpty else { return moves }
        // Each group's occupied intervals [start, end).
        var taken: [[(Int64, Int64)]] = groups.map { g in
            busy.filter { g.contains(row: $0.row, col: $0.col) && $0.until > 0 }.map { (0, $0.until) }
        }
        let order = moves.indices.sorted { (moves[$0].start, moves[$0].row, moves[$0].col) < (moves[$1].start, moves[$1].row, moves[$1].col) }
        var out = moves
        for i in order {
            let m = moves[i]
            let mine = groups.indices.filter { groups[$0].contains(row: Int(m.row), col: Int(m.col)) }
            guard !mine.isEmpty else { continue }
            let length = Int64(m.flips) * flip
            // The earliest start from the cascade instant on, or the end of an occupied interval,
            // at which every group of the module stays under its limit for the whole move.
            let candidates = ([m.start] + mine.flatMap { taken[$0].map(\.1) }.filter { $0 > m.start }).sorted()
            let start = candidates.first { t in
                mine.allSatisfy { g in peak(taken[g], from: t, to: t + length) < groups[g].maxMoving }
            } ?? candidates.last!
            out[i].start = start
            for g in mine { taken[g].append((start, start + length)) }
        }
        return out
    }

    /// The most intervals that overlap at any instant of [from, to).
    static func peak(_ intervals: [(Int64, Int64)], from: Int64, to: Int64) -> Int {
        let inside = intervals.filter { $0.0 < to && $0.1 > from }
        // The count only rises at a start: check at `from` and at every start within.
        let points = [from] + inside.map(\.0).filter { $0 > from }
        return points.map { p in inside.filter { $0.0 <= p && $0.1 > p }.count }.max() ?? 0
    }
}
