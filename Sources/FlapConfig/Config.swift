import FlapMessages
import FlapWiring
import FlapCore
import FlapClock
import Foundation

/// The daemon's configuration: what a person writes in `flapd.yaml`.
public struct FlapdConfig: Sendable {
    public var timing = FlipTiming()
    public var motion = Motion.forward
    /// Every board's transition style, unless a board sets its own.
    public var transition = TransitionStyle.classic
    public var realtime = RealtimeConfig()
    public var localAPI = LocalAPIConfig()
    public var sound = SoundConfig()
    /// Where the board state is kept across restarts; nil: not kept (see `Daemon.Options`).
    public var stateDir: String?
    public var boards: [BoardConfig] = [BoardConfig()]
    /// The message API to subscribe to; nil: none (local API only).
    public var messageAPI: MessageAPIConfig?
    /// The MQTT broker to show the board to (Home Assistant's discovery); nil: none.
    public var mqtt: MQTTConfig?
    /// Where senders' messages show. With a message API and no zones: everyone, whole first board.
    public var zones: [Zone] = []
    /// Boards addressed together as one grid (zones and the local API may name a grid).
    public var grids: [BoardGrid] = []
    /// Hours in which the boards do not move for messages (or move gently), unless forced.
    public var quietHours: QuietHours?
    /// The board's own senders: entries that speak at times of the day (`schedule:`).
    public var schedule: [ScheduleEntry] = []
    /// Where the schedule's live values come from (`sources:`).
    public var sources: [SourceConfig] = []
    /// The zone the schedule's times are read in (`time_zone:`; the machine's when absent).
    public var timeZone: TimeZone = .current

    public init() {}

    /// The calendar the schedule is read in.
    public var calendar: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        return c
    }

    /// The zones messages are routed to: `zones`, and — unless one of them lists `@local` — a
    /// zone of the local sender (the local API, `flapd demo --once`) over the whole of the local
    /// API's board, laid out as that board is.
    ///
    /// A schedule entry that no zone would take (none lists it, and there is no `*` zone) goes to
    /// that zone too: with no zones written, the schedule shows on the whole board.
    public var routedZones: [Zone] {
        guard !zones.contains(where: \.takesLocal), boards.indices.contains(localBoardIndex) else { return zones }
        let b = boards[localBoardIndex]
        let router = SenderRouter(zones: zones)
        let unzoned = schedule.filter { router.zones(for: $0.message(at: 0, in: calendar)).isEmpty }.map(\.senderID)
        var zone = Zone(board: localBoardIndex, rows: 0..<localSize.rows, cols: 0..<localSize.cols,
                        senders: .listed([InboxMessage.localSenderID] + unzoned), layout: b.layout)
        if let grid = localGrid { zone.pieces = grid.pieces(rows: zone.rows, cols: zone.cols) }
        return zones + [zone]
    }

    /// The board the local API addresses (the first of its grid, when it addresses a grid).
    public var localBoardIndex: Int {
        if let grid = localGrid { return grid.boards[0][0] }
        return localAPI.board.flatMap { id in boards.firstIndex { $0.id == id } } ?? 0
    }

    /// Where a board sits in the grid it plays as one with: the local API's grid when the board
    /// is in it, else the first grid that lists it; nil when none does.
    public func gridPlace(of board: Int) -> GridPlace? {
        guard let grid = (localGrid.map { [$0] } ?? []).first(where: { $0.origins[board] != nil })
                ?? grids.first(where: { $0.origins[board] != nil }), let o = grid.origins[board] else { return nil }
        return GridPlace(row: o.row, col: o.col, rows: grid.rows, cols: grid.cols)
    }

    /// The grid the local API addresses, if it names one.
    public var localGrid: BoardGrid? { localAPI.board.flatMap { id in grids.first { $0.id == id } } }

    /// The size of what the local API addresses: its board, or its grid.
    public var localSize: (rows: Int, cols: Int) {
        if let grid = localGrid { return (grid.rows, grid.cols) }
        let b = boards.indices.contains(localBoardIndex) ? boards[localBoardIndex] : BoardConfig()
        return (b.rows, b.cols)
    }
}

/// Real-time scheduling of the conductor's thread.
public struct RealtimeConfig: Sendable {
    /// 0: normal scheduling; 1…99: SCHED_FIFO at that priority.
    public var priority = 0
    public var lockMemory = false
    /// Keep CPUs out of idle states slower to wake than this (µs) while flapd runs; nil: no request.
    public var wakeLatencyMicros: Int?
    /// Most the conductor spins before a deadline after waking early (µs); 0: sleep only.
    public var spinMicros = Int(RealtimeOptions.defaultSpinMicros)
    public init() {}
}

/// The clack: on or off, where it plays, how loud, when not.
public struct SoundConfig: Sendable {
    public var enabled = true
    public var player = ClackOptions()
    public init() {}
}

/// The Vestaboard-compatible local HTTP API.
public struct LocalAPIConfig: Sendable {
    public var enabled = true
    public var bind = "127.0.0.1"
    public var port = 7000
    /// The key clients must send in `X-Vestaboard-Local-Api-Key`; nil: no key needed.
    public var key: String?
    /// The id of the board it addresses; nil: the first.
    public var board: String?
    /// The token `POST /local-api/enablement` takes (in `X-Vestaboard-Local-Api-Enablement-Token`)
    /// to answer with `key`, as a Vestaboard does for its clients' first run; nil: no enablement.
    public var enablementToken: String?
    public init() {}

    /// Why the API may not listen as configured: on an address beyond this machine without a
    /// key, anyone on the network could write the wall. Nil when it may.
    public var exposureProblem: String? {
        guard enabled, key == nil else { return nil }
        let loopback = bind == "localhost" || bind == "::1" || bind.hasPrefix("127.")
        return loopback ? nil : "\(bind) is reachable from other machines: set local_api.key (or FLAPD_LOCAL_API_KEY) to listen there"
    }
}

/// The local API refused to start as configured.
public struct LocalAPIExposure: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// Where a board's moves go.
public enum OutputKind: String, Sendable, CaseIterable, Codable {
    /// The virtual board on stdout.
    case virtual
    /// An open splitflap display (scottbez1/splitflap) on a serial port.
    case splitflap
    /// flapbus module controllers on a serial port (hardware/flapbus.md).
    case flapbus
    /// Salvaged Krone FBM station modules on an RS-485 bus.
    case krone
    /// Salvaged Omega RS-485 station modules.
    case omega
    /// Stepper modules on the Pi's GPIO lines (STEP/DIR drivers, 28BYJ-48 coils, 74HC595 chains).
    case gpio
}

/// A serial port and how its line is set.
public struct SerialConfig: Sendable, Equatable {
    public var port: String
    public var settings: SerialLineSettings
    /// Milliseconds before an unanswered frame is sent again.
    public var retryMs: Int
    /// Row-major: each module's bus address (station modules).
    public var addresses: [UInt8] = []
    /// Whether flapd homes every module when it starts (flapbus).
    public var homeAtStart = false
    /// Seconds between STATUS requests (flapbus).
    public var statusSeconds = 5
}

/// One board.
public struct BoardConfig: Sendable {
    /// The Vestaboard models, as presets of size (and of the face of code 62).
    public enum Model: String, Sendable, CaseIterable {
        /// 6 × 22.
        case flagship
        /// 3 × 15; code 62 is a heart (❤), not a degree sign.
        case note
        public var size: (rows: Int, cols: Int) { self == .note ? (3, 15) : (6, 22) }
    }

    public var id = "wall"
    public var model: Model?
    /// Code 62 drawn as ❤ (a Note), not °.
    public var heart: Bool { model == .note }
    public var rows = 6
    public var cols = 22
    public var drum = Drum.standard
    public var output = OutputKind.virtual
    /// The port of a serial output.
    public var serial: SerialConfig?
    /// The lines and motors of a GPIO output.
    public var gpio: GPIOBoardConfig?
    public var motion = Motion.forward
    public var timing = FlipTiming()
    /// The style of its transitions when a message names none.
    public var transition = TransitionStyle.classic
    public var layout = Layout()
    public var substitutes: [String: Glyph] = [:]
    public var fallback = Glyph.blank

    public init() {}

    /// Plans this board's change between two frames of its own mapper's glyphs.
    public func plan(from: Frame, to: Frame, style: TransitionStyle? = nil) -> FlipPlan {
        Planner.plan(from: from, to: to, drum: drum, timing: timing, motion: motion, style: style ?? transition)!
    }

    /// The mapper from message text to this board's drum.
    public var mapper: GlyphMapper { GlyphMapper(drum: drum, substitutes: substitutes, fallback: fallback) }
}
