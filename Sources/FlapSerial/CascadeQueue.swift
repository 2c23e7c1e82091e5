import FlapCore

/// Each moving module's target flap at its cascade instant, for outputs that tell modules their
/// flap when their turn comes. A new plan, and a stop, drop every move not started by their
/// instant, of every module (the conductor's rule: a module that had not started and stays
/// where it is must not be sent the old target later).
struct CascadeQueue {
    /// (instant, module, flap), soonest last.
    private(set) var due: [(at: Int64, module: Int, flap: UInt8)] = []
    let cols: Int

    mutating func replace(with plan: FlipPlan, transitionStart: Int64) {
        drop(after: transitionStart)
        due += plan.moves.map { (transitionStart + $0.start, Int($0.row) * cols + Int($0.col), $0.to) }
        due.sort { $0.at > $1.at }
    }

    /// Drops the moves that start after `instant`.
    mutating func drop(after instant: Int64) { due.removeAll { $0.at > instant } }

    /// The soonest instant queued.
    var next: Int64? { due.last?.at }

    /// Takes everything due by `now`, soonest first.
    mutating func take(by now: Int64) -> [(at: Int64, module: Int, flap: UInt8)] {
        var out: [(at: Int64, module: Int, flap: UInt8)] = []
        while let d = due.last, d.at <= now { out.append(d); due.removeLast() }
        return out
    }
}
