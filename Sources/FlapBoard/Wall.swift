import FlapConfig
import FlapCore
import FlapClock
import FlapTiming
import Logging
import Synchronization

/// The boards of one daemon. Takes each board's composed frame (from the mailroom, the one way
/// in), puts it on the board's drum and hands it to the conductor, which re-plans from where the
/// modules are. Remembers each board's target frame (what the local API reads back).
public final class Wall: Sendable {
    private let current: Mutex<FlapdConfig>
    /// The configuration in force (a reload may change it).
    public var config: FlapdConfig { current.withLock { $0 } }
    public let conductor: Conductor
    private let targets: Mutex<[Frame]>
    /// Tokens already reported as substituted, per board, so each is logged once.
    private let reported: Mutex<[Set<String>]>
    private let logger: Logger

    /// What showing a message did.
    public struct Shown: Sendable {
        public var transition: Conductor.Transition
        public var frame: Frame
        /// Lines of text that did not fit and were cut.
        public var cut: [String]
        public var substitutions: [Substitution]
    }

    /// Called after every accepted message with its board and frame (the state keeper saves
    /// then, the status line says where the board is going), outside every lock.
    private let accepted: @Sendable (_ board: Int, _ frame: Frame) -> Void

    public init(config: FlapdConfig, drivers: [any FlipObserver], clackSinks: [any ClackSink] = [],
                planSinks: [any MovePlanSink] = [], logger: Logger,
                accepted: @escaping @Sendable (_ board: Int, _ frame: Frame) -> Void = { _, _ in }) {
        self.current = Mutex(config)
        self.logger = logger
        self.accepted = accepted
        conductor = Conductor(
            boards: config.boards.enumerated().map { i, b in
                Conductor.Board(rows: b.rows, cols: b.cols, drum: b.drum, timing: b.timing, motion: b.motion, style: b.transition,
                                place: config.gridPlace(of: i))
            },
            drivers: drivers, clackSinks: clackSinks, planSinks: planSinks)
        targets = Mutex(config.boards.map { Frame(rows: $0.rows, cols: $0.cols, filledWith: $0.drum.glyphs[0]) })
        reported = Mutex(Array(repeating: [], count: config.boards.count))
    }

    /// Shows a composed frame; a glyph the drum lacks becomes its substitute. One writer calls
    /// this (the mailroom, on its desk; `resume` before the mailroom starts): the targets and
    /// the conductor take the frames in the order given, and no lock is held while the
    /// conductor and `accepted` are called.
    /// `style`: how the board moves to it, when not its own style. `start`: the transition's t0
    /// (monotonic ns; now when nil) — the boards of one message share it, so a grid's cascade
    /// runs on from one board into the next.
    public func show(frame: Frame, board: Int, substitutions: [Substitution] = [], style: TransitionStyle? = nil, start: Int64? = nil) -> Shown {
        show(frame: frame, board: board, cut: [], substitutions: substitutions, style: style, start: start)
    }

    private func show(frame: Frame, board: Int, cut: [String], substitutions: [Substitution], style: TransitionStyle? = nil,
                      start: Int64? = nil) -> Shown {
        let b = config.boards[board]
        var frame = frame
        if b.drum.indices(of: frame) == nil {
            let mapper = b.mapper
            for r in 0..<frame.rows { for c in 0..<frame.cols { frame[r, c] = mapper.map(.code(Int(frame[r, c].code))).glyph } }
        }
        let fresh = reported.withLock { seen in substitutions.filter { seen[board].insert($0.original).inserted } }
        for s in fresh { logger.notice("glyph substituted", metadata: ["board": "\(b.id)", "substitution": "\(s)"]) }
        // Every glyph is on the drum now.
        let indices = b.drum.indices(of: frame)!
        targets.withLock { $0[board] = frame }
        let transition = conductor.play(board: board, target: indices, start: start, style: style)
        accepted(board, frame)
        return Shown(transition: transition, frame: frame, cut: cut, substitutions: substitutions)
    }

    /// Takes a saved state back: where the modules are and the frame the board was going to.
    /// Call before the conductor starts; `resume` then plays the rest of the way.
    public func restore(board: Int, positions: [Int], target: [Int]) -> [String] {
        let b = config.boards[board]
        var problems: [String] = []
        guard positions.count == b.rows * b.cols, target.count == positions.count else {
            return ["saved state of '\(b.id)' is for another size; starting blank"]
        }
        let indices = positions.map { code -> UInt8 in
            if let g = Glyph(code: code), let i = b.drum.index(of: g) { return UInt8(i) }
            problems.append("saved flap {\(code)} is not on the drum of '\(b.id)'")
            return 0
        }
        conductor.restore(board: board, positions: indices)
        let mapper = b.mapper
        var frame = Frame(rows: b.rows, cols: b.cols)
        for (i, code) in target.enumerated() { frame[i / b.cols, i % b.cols] = mapper.map(.code(code)).glyph }
        targets.withLock { $0[board] = frame }
        return problems
    }

    /// Plays every board to its target if it is not there (after a restore).
    public func resume() {
        for board in config.boards.indices where conductor.frame(board: board) != target(board: board) {
            let frame = target(board: board)
            _ = show(frame: frame, board: board, cut: [], substitutions: [])
        }
    }

    /// A part of a re-read configuration that changes only with a restart.
    public enum RestartOnly: Equatable, Sendable, CustomStringConvertible {
        /// Boards added, removed or reordered: nothing else of the new config applies.
        case boardList(from: [String], to: [String])
        /// A board's size, drum or output.
        case boardShape(String)
        case boardSerial(String)
        case localAPI, sound, realtime, messageAPI, mqtt
        /// A schedule where flapd started without one, or a schedule whose sources changed.
        case schedule
        /// The schedule's sources.
        case sources

        public var description: String {
            switch self {
            case .boardList(let from, let to): "the list of boards changed (\(from) → \(to))"
            case .boardShape(let id): "board '\(id)': size, drum or output"
            case .boardSerial(let id): "board '\(id)': serial"
            case .localAPI: "local_api"
            case .sound: "sound"
            case .realtime: "realtime"
            case .messageAPI: "message_api"
            case .mqtt: "mqtt"
            case .schedule: "schedule (where flapd started without one, or its sources changed)"
            case .sources: "sources"
            }
        }
    }

    /// Applies a re-read configuration to the running boards: timing, motion, layout,
    /// substitutions and fallback take effect for the next message (targets are kept). Returns
    /// what cannot change without a restart (the set of boards, their size or drum, the local
    /// API, sound); those parts keep their running values.
    public func apply(_ new: FlapdConfig) -> [RestartOnly] {
        let old = config
        var needsRestart: [RestartOnly] = []
        guard new.boards.map(\.id) == old.boards.map(\.id) else {
            return [.boardList(from: old.boards.map(\.id), to: new.boards.map(\.id))]
        }
        var merged = old
        for (i, (was, now)) in zip(old.boards, new.boards).enumerated() {
            if was.rows != now.rows || was.cols != now.cols || was.drum != now.drum || was.output != now.output {
                needsRestart.append(.boardShape(now.id))
                continue
            }
            merged.boards[i] = now
            if was.serial != now.serial {
                needsRestart.append(.boardSerial(now.id))
                merged.boards[i].serial = was.serial
            }
            conductor.update(board: i, timing: now.timing, motion: now.motion, style: now.transition, place: new.gridPlace(of: i))
        }
        if new.localAPI.bind != old.localAPI.bind || new.localAPI.port != old.localAPI.port
            || new.localAPI.key != old.localAPI.key || new.localAPI.board != old.localAPI.board
            || new.localAPI.enabled != old.localAPI.enabled {
            needsRestart.append(.localAPI)
        }
        if new.sound.enabled != old.sound.enabled || new.sound.player != old.sound.player { needsRestart.append(.sound) }
        if new.realtime.priority != old.realtime.priority || new.realtime.lockMemory != old.realtime.lockMemory
            || new.realtime.wakeLatencyMicros != old.realtime.wakeLatencyMicros || new.realtime.spinMicros != old.realtime.spinMicros {
            needsRestart.append(.realtime)
        }
        current.withLock { $0 = merged }
        return needsRestart
    }

    /// The frame the board is going to (or shows, once settled).
    public func target(board: Int) -> Frame { targets.withLock { $0[board] } }

    /// Whether `board` is the local API's board or one of its grid: what `localCodes` reads.
    public func isLocal(board: Int) -> Bool {
        guard let grid = config.localGrid else { return board == config.localBoardIndex }
        return grid.origins[board] != nil
    }

    /// What the local API's board (or grid of boards, as one) is going to show (or shows, once
    /// settled), as codes row by row: what the Local API and the Cloud API read back.
    public func localCodes() -> [[Int]] {
        guard let grid = config.localGrid else { return target(board: config.localBoardIndex).codes }
        var rows = Array(repeating: Array(repeating: 0, count: grid.cols), count: grid.rows)
        for (board, o) in grid.origins {
            for (r, line) in target(board: board).codes.prefix(o.rows).enumerated() {
                for (c, code) in line.prefix(o.cols).enumerated() { rows[o.row + r][o.col + c] = code }
            }
        }
        return rows
    }
}
