/// The timing of a board's transitions, in nanoseconds. For a transition started at t0 the
/// module at row r, column c starts at `t0 + c·columnStagger + r·rowStagger`; its k-th flip
/// spans `[start + k·flip, start + (k+1)·flip)` and clacks at its 90° point, mid-flip.
public struct FlipTiming: Hashable, Sendable {
    public var flip: Int64
    public var columnStagger: Int64
    public var rowStagger: Int64
    /// Groups of modules sharing a supply; the cascade stretches to keep each under its limit.
    public var powerGroups: [PowerGroup] = []

    /// 120 ms per flip, 20 ms per column, 50 ms per row.
    public init(flip: Int64 = 120_000_000, columnStagger: Int64 = 20_000_000, rowStagger: Int64 = 50_000_000) {
        self.flip = flip
        self.columnStagger = columnStagger
        self.rowStagger = rowStagger
    }

    /// The same timing given in whole milliseconds.
    public init(flipMs: Int, columnStaggerMs: Int, rowStaggerMs: Int) {
        self.init(flip: Int64(flipMs) * 1_000_000, columnStagger: Int64(columnStaggerMs) * 1_000_000,
                  rowStagger: Int64(rowStaggerMs) * 1_000_000)
    }

    /// The cascade offset of a module from the transition's start.
    @inline(__always)
    public func cascade(row: Int, col: Int) -> Int64 {
        Int64(col) * columnStagger + Int64(row) * rowStagger
    }

    /// The range of `flip` a config may set, in milliseconds.
    public static let flipMsRange = 50...200
}

/// Which way a module may turn.
public enum Motion: String, Sendable, CaseIterable {
    /// Forward only, as every physical drum turns.
    case forward
    /// Forward or backward, whichever is fewer flips (ties go forward): LED and virtual modules.
    case shortest
}
