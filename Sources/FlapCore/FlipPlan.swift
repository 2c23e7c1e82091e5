/// The motion of one module in a transition: `flips` flips of `direction` from drum index
/// `from`, the first starting `start` nanoseconds after the transition's t0.
public struct ModuleMove: Hashable, Sendable {
    public var row: Int32
    public var col: Int32
    public var from: UInt8
    public var to: UInt8
    public var flips: Int32
    /// +1 forward, −1 backward.
    public var direction: Int8
    public var start: Int64

    /// When the k-th flip starts.
    @inline(__always)
    public func flipStart(_ k: Int, flip: Int64) -> Int64 { start + Int64(k) * flip }
    /// The 90° instant of the k-th flip: where its clack sounds and the new glyph shows.
    @inline(__always)
    public func clack(_ k: Int, flip: Int64) -> Int64 { start + Int64(k) * flip + flip / 2 }
    /// When the last flip ends.
    public func end(flip: Int64) -> Int64 { start + Int64(flips) * flip }
    /// The drum index shown after the k-th flip.
    public func position(afterFlip k: Int, drumCount: Int) -> Int {
        ((Int(from) + Int(direction) * (k + 1)) % drumCount + drumCount) % drumCount
    }
}

/// Where one module is when a transition is planned: the drum index it shows (counting a flip in
/// progress as done), and the offset from t0 at which it is free to move (when that flip ends).
public struct ModuleState: Hashable, Sendable {
    public var position: UInt8
    public var readyAt: Int64

    public init(position: UInt8, readyAt: Int64 = 0) {
        self.position = position
        self.readyAt = readyAt
    }
}

/// Every moving module's flips for one transition of a board. Modules whose glyph does not
/// change are not in it.
public struct FlipPlan: Sendable {
    public let rows: Int
    public let cols: Int
    public let drum: Drum
    public let timing: FlipTiming
    /// Moving modules in row-major order.
    public let moves: [ModuleMove]

    /// From t0 to the end of the last flip (0 when nothing moves).
    public var duration: Int64 { moves.reduce(0) { max($0, $1.end(flip: timing.flip)) } }
    /// The number of flips, which is also the number of clacks.
    public var flipCount: Int { moves.reduce(0) { $0 + Int($1.flips) } }
}

/// Where a board sits in a grid of boards that plays as one: its top-left module's row and
/// column in the grid, and the grid's size in modules.
public struct GridPlace: Hashable, Sendable {
    public var row: Int
    public var col: Int
    public var rows: Int
    public var cols: Int
    public init(row: Int, col: Int, rows: Int, cols: Int) { self.row = row; self.col = col; self.rows = rows; self.cols = cols }
}

/// Plans transitions: pure arithmetic from module states and a target to a `FlipPlan`.
public enum Planner {
    /// Plans the change of a rows × cols board from `states` (row-major) to the drum indices of
    /// `target` (row-major). A module starts when `style` lets it (the cascade instant, for the
    /// classic style), or when it is ready if later; then the style's arrival, its cap on moving
    /// modules and the board's power groups may move starts later, never earlier than ready.
    /// `place`: where the board sits in a grid of boards that plays as one — each module's
    /// instant is then its place in the grid's order (the cascade runs on from the board to its
    /// left and above), not in the board's own.
    public static func plan(
        rows: Int, cols: Int, from states: [ModuleState], to target: [UInt8],
        drum: Drum, timing: FlipTiming, motion: Motion, style: TransitionStyle = .classic, place: GridPlace? = nil
    ) -> FlipPlan {
        precondition(states.count == rows * cols && target.count == rows * cols, "plan: size mismatch")
        let n = drum.count
        let whole = place ?? GridPlace(row: 0, col: 0, rows: rows, cols: cols)
        let ranks = style.ranks(count: whole.rows * whole.cols)
        var moves: [ModuleMove] = []
        moves.reserveCapacity(rows * cols)
        var i = 0
        for r in 0..<rows {
            for c in 0..<cols {
                let from = Int(states[i].position), to = Int(target[i])
                let forward = (to - from + n) % n
                if forward != 0 {
                    var flips = forward, direction: Int8 = 1
                    if motion == .shortest, n - forward < forward { flips = n - forward; direction = -1 }
                    let (gr, gc) = (whole.row + r, whole.col + c)
                    let offset = style.offset(row: gr, col: gc, rows: whole.rows, cols: whole.cols,
                                              rank: ranks.isEmpty ? 0 : ranks[gr * whole.cols + gc], timing: timing)
                    moves.append(ModuleMove(
                        row: Int32(r), col: Int32(c), from: UInt8(from), to: UInt8(to),
                        flips: Int32(flips), direction: direction, start: max(offset, states[i].readyAt)))
                }
                i += 1
            }
        }
        if style.arrival != .cascade, !moves.isEmpty {
            // One landing instant: the first at which every module can have made its whole way.
            var land = moves.map { states[Int($0.row) * cols + Int($0.col)].readyAt + Int64($0.flips) * timing.flip }.max()!
            if case .at(let instant) = style.arrival { land = max(land, instant) }
            for m in moves.indices { moves[m].start = land - Int64(moves[m].flips) * timing.flip }
        }
        var groups = timing.powerGroups
        if let cap = style.maxMoving { groups.append(PowerGroup(rows: 0...max(0, rows - 1), cols: 0...max(0, cols - 1), maxMoving: max(1, cap))) }
        if !groups.isEmpty {
            // A module finishing a flip counts until it ends (a moving one starts after that).
            var busy: [(row: Int, col: Int, until: Int64)] = []
            for (i, s) in states.enumerated() where s.readyAt > 0 { busy.append((i / cols, i % cols, s.readyAt)) }
            moves = PowerBudget.apply(moves, groups: groups, flip: timing.flip, busy: busy)
        }
        return FlipPlan(rows: rows, cols: cols, drum: drum, timing: timing, moves: moves)
    }

    /// Plans from glyph frames; every glyph of both frames must be on the drum (a `GlyphMapper`
    /// guarantees that for what it produced). Nil when one is not.
    public static func plan(from current: Frame, to target: Frame, drum: Drum, timing: FlipTiming,
                            motion: Motion, style: TransitionStyle = .classic) -> FlipPlan? {
        guard current.rows == target.rows, current.cols == target.cols,
              let states = drum.indices(of: current), let goal = drum.indices(of: target) else { return nil }
        return plan(rows: current.rows, cols: current.cols,
                    from: states.map { ModuleState(position: $0) }, to: goal,
                    drum: drum, timing: timing, motion: motion, style: style)
    }
}

extension Drum {
    /// The drum index of every glyph of a frame, or nil when one is not on the drum.
    public func indices(of frame: Frame) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(frame.glyphs.count)
        for g in frame.glyphs {
            guard let i = index(of: g) else { return nil }
            out.append(UInt8(i))
        }
        return out
    }
}
