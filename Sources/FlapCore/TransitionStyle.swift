/// How the modules of one transition are spread in time: the order they start in, and when they
/// land. The planner turns it into every module's start instant; every output and the clack play
/// those instants, so a style needs nothing of them.
///
/// - `classic`: the board's cascade (`FlipTiming`: a column stagger and a row stagger).
/// - The Vestaboard Local API's strategies: modules start in groups, one group every
///   `stepInterval`; a group is `stepSize` columns (`column`, `reverseColumn`, `edgesToCenter`),
///   rows (`row`), diagonals (`diagonal`) or modules (`random`, in an order drawn from `seed`).
/// - `arrival`: as the order says (`cascade`), all on one instant (`together`: each module starts
///   early by its own travel time, so that forward-only drums with different distances land at
///   once), or at a given instant from t0 (`at`, as soon after it as every module can).
/// - `maxMoving`: at most that many modules of the board turn at once (a gentle transition); a
///   module that would exceed it starts when one before it has landed.
///
/// Unlike the Vestaboard, a module whose flap does not change never moves, whatever the style.
public struct TransitionStyle: Hashable, Sendable {
    public enum Order: String, Hashable, Sendable, CaseIterable {
        case classic
        case column
        case reverseColumn = "reverse-column"
        case edgesToCenter = "edges-to-center"
        case row
        case diagonal
        case random
    }

    public enum Arrival: Hashable, Sendable {
        case cascade
        case together
        /// Nanoseconds from the transition's t0.
        case at(Int64)
    }

    public var order: Order
    public var stepSize: Int
    /// Nanoseconds between two groups.
    public var stepInterval: Int64
    public var arrival: Arrival
    public var maxMoving: Int?
    public var seed: UInt64

    public init(order: Order = .classic, stepSize: Int = 1, stepInterval: Int64 = 40_000_000,
                arrival: Arrival = .cascade, maxMoving: Int? = nil, seed: UInt64 = 0) {
        self.order = order; self.stepSize = stepSize; self.stepInterval = stepInterval
        self.arrival = arrival; self.maxMoving = maxMoving; self.seed = seed
    }

    /// The board's own cascade, landing as it goes.
    public static let classic = TransitionStyle()

    /// The Local API's limits (those of the Vestaboard's own clients).
    public static let stepSizes = 1...132
    public static let stepIntervalsMs = 1...3000

    /// The step of a module (row, col) of a rows × cols board, for the group orders; `rank` is
    /// its place in the random order.
    func step(row: Int, col: Int, rows: Int, cols: Int, rank: Int) -> Int {
        let size = max(1, stepSize)
        switch order {
        case .classic: return 0
        case .column: return col / size
        case .reverseColumn: return (cols - 1 - col) / size
        case .edgesToCenter: return min(col, cols - 1 - col) / size
        case .row: return row / size
        case .diagonal: return (row + col) / size
        case .random: return rank / size
        }
    }

    /// The instant, from t0, at which the order lets a module start.
    func offset(row: Int, col: Int, rows: Int, cols: Int, rank: Int, timing: FlipTiming) -> Int64 {
        order == .classic ? timing.cascade(row: row, col: col)
            : Int64(step(row: row, col: col, rows: rows, cols: cols, rank: rank)) * stepInterval
    }

    /// Each module's place (row-major) in the random order: a Fisher–Yates shuffle driven by
    /// SplitMix64 from `seed`, the same on every machine.
    func ranks(count: Int) -> [Int] {
        guard order == .random else { return [] }
        var order = Array(0..<count), random = SeededRandom(seed: seed)
        if count > 1 {
            for i in stride(from: count - 1, to: 0, by: -1) { order.swapAt(i, Int(random.next() % UInt64(i + 1))) }
        }
        var rank = Array(repeating: 0, count: count)
        for (place, module) in order.enumerated() { rank[module] = place }
        return rank
    }
}

extension TransitionStyle {
    /// The names of the Vestaboard app and cloud, and their speeds.
    public enum Speed: String, Hashable, Sendable, CaseIterable { case gentle, fast }

    /// The app/cloud names: `classic`, `wave` (column), `drift` (reverse-column), `curtain`
    /// (edges-to-center); and `together` (synchronized arrival). `fast`: a group every 40 ms;
    /// `gentle`: every 120 ms, and at most 12 modules turning at once.
    public static let names: [String: Order] = ["classic": .classic, "wave": .column, "drift": .reverseColumn, "curtain": .edgesToCenter, "together": .classic]

    public static func named(_ name: String, speed: Speed = .fast) -> TransitionStyle? {
        guard let order = names[name] else { return nil }
        var style = TransitionStyle(order: order, stepInterval: speed == .fast ? 40_000_000 : 120_000_000,
                                    arrival: name == "together" ? .together : .cascade)
        if speed == .gentle { style.maxMoving = 12 }
        return style
    }
}

/// The fields that choose a transition, as a Local API body, a message or a config gives them
/// (all optional): Vestaboard's `strategy`, `step_size`, `step_interval_ms`; the app's
/// `transition` and `speed`; and `arrival` (`cascade`, `together`) and `max_moving`.
public struct TransitionFields: Hashable, Sendable, Codable {
    public var strategy: String?
    public var stepSize: Int?
    public var stepIntervalMs: Int?
    public var transition: String?
    public var speed: String?
    public var arrival: String?
    public var maxMoving: Int?

    enum CodingKeys: String, CodingKey {
        case strategy, transition, speed, arrival
        case stepSize = "step_size", stepIntervalMs = "step_interval_ms", maxMoving = "max_moving"
    }

    public init(strategy: String? = nil, stepSize: Int? = nil, stepIntervalMs: Int? = nil, transition: String? = nil,
                speed: String? = nil, arrival: String? = nil, maxMoving: Int? = nil) {
        self.strategy = strategy; self.stepSize = stepSize; self.stepIntervalMs = stepIntervalMs
        self.transition = transition; self.speed = speed; self.arrival = arrival; self.maxMoving = maxMoving
    }

    /// Whether any field is given.
    public var isEmpty: Bool { self == TransitionFields() }

    /// A field that is wrong, named, with what it may be.
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public var field: String
        public var problem: String
        public var description: String { "\(field): \(problem)" }
    }

    /// The style these fields make of `base` (the board's own, when a message gives none of them).
    /// A strategy without `step_interval_ms` steps every 40 ms, as the fast app styles do.
    public func style(over base: TransitionStyle = .classic) throws(Invalid) -> TransitionStyle {
        var style = base
        if strategy != nil && transition != nil {
            throw Invalid(field: "strategy", problem: "give either strategy or transition, not both")
        }
        let speed: TransitionStyle.Speed
        if let s = self.speed {
            guard let v = TransitionStyle.Speed(rawValue: s) else { throw Invalid(field: "speed", problem: "'\(s)' is not gentle or fast") }
            speed = v
        } else { speed = .fast }
        if let name = transition {
            guard let named = TransitionStyle.named(name, speed: speed) else {
                throw Invalid(field: "transition", problem: "'\(name)' is not one of \(TransitionStyle.names.keys.sorted().joined(separator: ", "))")
            }
            style = named
        } else if self.speed != nil, base.order == .classic, strategy == nil {
            style = TransitionStyle.named("classic", speed: speed)!
        }
        if let s = strategy {
            guard let order = TransitionStyle.Order(rawValue: s) else {
                throw Invalid(field: "strategy", problem: "'\(s)' is not one of \(TransitionStyle.Order.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            style = TransitionStyle(order: order, arrival: style.arrival, maxMoving: speed == .gentle ? 12 : nil)
        }
        if let n = stepSize {
            guard TransitionStyle.stepSizes.contains(n) else { throw Invalid(field: "step_size", problem: "\(n) is outside 1–132") }
            style.stepSize = n
        }
        if let ms = stepIntervalMs {
            guard TransitionStyle.stepIntervalsMs.contains(ms) else { throw Invalid(field: "step_interval_ms", problem: "\(ms) is outside 1–3000") }
            style.stepInterval = Int64(ms) * 1_000_000
        }
        if let a = arrival {
            switch a {
            case "cascade": style.arrival = .cascade
            case "together": style.arrival = .together
            default: throw Invalid(field: "arrival", problem: "'\(a)' is not cascade or together")
            }
        }
        if let cap = maxMoving {
            guard (1...10_000).contains(cap) else { throw Invalid(field: "max_moving", problem: "\(cap) is outside 1–10000") }
            style.maxMoving = cap
        }
        return style
    }
}
