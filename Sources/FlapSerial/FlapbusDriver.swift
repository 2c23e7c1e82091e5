import FlapCore
import FlapClock
import Synchronization

/// One board of flapbus modules: every module's move goes to its controller as soon as it is
/// planned, with the instant its first flip starts on the host's time base (the controllers
/// keep time, set by SYNC) and the plan's flip interval; an LED controller is sent, instead,
/// the glyph of each flip at its 90° instant. Modules count row by row from `firstModule`.
///
/// A MOVE for a moving module replaces its target from the flap its flip in progress ends on
/// (`hardware/flapbus.md`), which is the conductor's rule: so a new plan stops every module it
/// does not move where its flip in progress ends, and `finish` stops them all so.
public final class FlapbusDriver: MovePlanSink, Sendable {
    public let board: Int
    public let link: FlapbusLink
    private let cols: Int
    private let firstModule: Int
    /// Each module's latest move, its absolute start and flip interval, until it is over.
    private let moving = Mutex<[Int: (move: ModuleMove, start: Int64, flip: Int64, flaps: Int)]>([:])
    /// Each module's last MOVE target (drum index), once it has had one.
    private let targets = Mutex<[Int: UInt8]>([:])
    /// Told of each MOVE as it is handed to the link (row-major module, drum index).
    private let onSent: @Sendable (Int, UInt8) -> Void

    public init(board: Int, cols: Int, firstModule: Int = 0, link: FlapbusLink, onSent: @escaping @Sendable (Int, UInt8) -> Void = { _, _ in }) {
        self.board = board
        self.onSent = onSent
        self.cols = cols
        self.firstModule = firstModule
        self.link = link
    }

    /// Starts the link, first telling every module to go to where flapd believes it is
    /// (`positions`, row-major drum indices, a restored state), from now, at `flip` a flip —
    /// nothing for a module already there or on its way there, as the splitflap display and the
    /// station modules are sent their state at start; a MOVE queued by a run killed before it
    /// went out is sent so.
    public func start(positions: [UInt8]?, flip: Int64) {
        if let positions {
            let now = UInt64(MonotonicClock.now() / 1000)
            send(positions.indices.map { Flapbus.Move(module: address($0), flap: positions[$0], startMicros: now, flipMs: UInt16(flip / 1_000_000)) },
                 shows: [])
        }
        link.start()
    }

    /// Where the controller says this board's `count` modules stand, asked before `start` (see
    /// `FlapbusLink.stillReport`): the flap of each module it reports normal (state 0) and still,
    /// nil for one that is not normal. Nil when no report came.
    public func reported(count: Int, answerWithin: Double = StartReportWait.answer, stillWithin: Double = StartReportWait.still) -> ReportedPositions? {
        guard let all = link.stillReport(answerWithin: answerWithin, stillWithin: stillWithin) else { return nil }
        guard all.count >= firstModule + count else { return .otherCount(all.count) }
        let mine = all[firstModule..<(firstModule + count)]
        guard !mine.contains(where: { $0.moving == nil }) else { return .motionUnknown }
        return .flaps(mine.map { $0.state == 0 ? Int($0.flap) : nil })
    }

    /// Lets every queued frame be acknowledged (a stop's MOVEs above all; at most `timeout`
    /// seconds, against a controller that is gone), then stops the link.
    public func stop(timeout: Double = 2) {
        _ = link.waitUntilIdle(timeout: timeout)
        link.stop()
    }

    /// Where each of `count` modules goes by its controller's clock, what its last MOVE said
    /// (nil: none sent yet).
    public func sent(count: Int) -> [Int?] {
        targets.withLock { t in (0..<count).map { t[$0].map(Int.init) } }
    }

    /// Hands MOVEs (and SHOWs) to the link, noting each module's new target first.
    private func send(_ moves: [Flapbus.Move], shows: [Flapbus.Show]) {
        targets.withLock { t in
            for m in moves { t[Int(m.module) - firstModule] = m.flap }
        }
        for m in moves { onSent(Int(m.module) - firstModule, m.flap) }  // outside the lock, before the link
        link.transition(moves: moves, shows: shows)
    }

    private func module(_ m: ModuleMove) -> Int { Int(m.row) * cols + Int(m.col) }
    private func address(_ module: Int) -> UInt16 { UInt16(firstModule + module) }

    public func planned(board: Int, plan: FlipPlan, transitionStart: Int64) {
        guard board == self.board, !plan.moves.isEmpty else { return }
        let flip = plan.timing.flip
        let flaps = plan.drum.glyphs.count
        let stops = moving.withLock { all in
            let stops = self.stopMoves(of: &all, at: transitionStart, except: Set(plan.moves.map(module)))
            for m in plan.moves { all[module(m)] = (m, transitionStart + m.start, flip, flaps) }
            return stops
        }
        let moves = stops + plan.moves.map { m in
            Flapbus.Move(module: address(module(m)), flap: m.to, startMicros: UInt64((transitionStart + m.start) / 1000),
                         flipMs: UInt16(flip / 1_000_000))
        }
        let shows = plan.moves.flatMap { m in
            (0..<Int(m.flips)).map { k in
                Flapbus.Show(module: address(module(m)), code: plan.drum.glyphs[m.position(afterFlip: k, drumCount: flaps)].code,
                             atMicros: UInt64((transitionStart + m.clack(k, flip: flip)) / 1000))
            }
        }
        send(moves, shows: shows)
    }

    public func finish(board: Int, at instant: Int64) {
        guard board == self.board else { return }
        let stops = moving.withLock { self.stopMoves(of: &$0, at: instant, except: []) }
        if !stops.isEmpty { send(stops, shows: []) }
    }

    /// For every module (but `except`) whose move has flips still to start after `instant`: a
    /// MOVE to the flap its flip in progress ends on (or where it stands), starting at `instant`.
    private func stopMoves(of all: inout [Int: (move: ModuleMove, start: Int64, flip: Int64, flaps: Int)], at instant: Int64,
                              except: Set<Int>) -> [Flapbus.Move] {
        var out: [Flapbus.Move] = []
        for (module, m) in all.sorted(by: { $0.key < $1.key }) where !except.contains(module) {
            let started = instant < m.start ? 0 : Int((instant - m.start) / m.flip) + 1
            all[module] = nil
            guard started < Int(m.move.flips) else { continue }
            let flap = started == 0 ? Int(m.move.from) : m.move.position(afterFlip: started - 1, drumCount: m.flaps)
            out.append(Flapbus.Move(module: address(module), flap: UInt8(flap), startMicros: UInt64(instant / 1000),
                                    flipMs: UInt16(m.flip / 1_000_000)))
        }
        return out
    }
}
