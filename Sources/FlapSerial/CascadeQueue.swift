import FlapCore

/// Each moving module's target flap at its cascade instant, for outputs that tell modules their
/// flap when their turn comes: a new plan replaces what its modules still had queued.
struct CascadeQueue {
    /// (instant, module, flap), soonest last.
    private(set) var due: [(at: Int64, module: Int, flap: UInt8)] = []
    let cols: Int

    mutating func replace(with plan: FlipPlan, transitionStart: Int64) {
        let moving = Set(plan.moves.map { Int($0.row) * cols + Int($0.col) })
        due.removeAll { moving.contains($0.module) }
        due += plan.moves.map { (transitionStart + $0.start, Int($0.row) * cols + Int($0.col), $0.to) }
        due.sort { $0.at > $1.at }
    }

    /// The soonest instant queued.
    var next: Int64? { due.last?.at }

    /// Takes everything due by `now`, soonest first.
    mutating func take(by now: Int64) -> [(at: Int64, module: Int, flap: UInt8)] {
        var out: [(at: Int64, module: Int, flap: UInt8)] = []
        while let d = due.last, d.at <= now { out.append(d); due.removeLast() }
        return out
    }
}
