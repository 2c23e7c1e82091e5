import FlapClock
import FlapCore

/// The next flip of one moving module.
struct TimedFlip {
    var instant: Int64
    var board: Int32
    var module: Int32
    var flip: Int32
    var remaining: Int32
    var direction: Int8
    /// A homing turn's end (`Conductor.landed`): the drum index the module landed on, and the
    /// flaps its turn passed; -1 for a flip.
    var landing: Int16 = -1
    var flaps: Int32 = 1
}

/// A board as the conductor sees it.
struct Track {
    var board: Conductor.Board
    /// Drum index each module shows, as flips fired.
    var positions: [UInt8]
    /// When each module's last fired flip ends (monotonic ns).
    var busyUntil: [Int64]
    var pending = 0
    /// Modules in a homing turn (`Conductor.home`): counted in `pending` until they land, and
    /// planned for by no flip — their output takes them to their newest target.
    var homing: Set<Int> = []
    var transition = 0
    var transitionStart: Int64 = 0

    init(board: Conductor.Board) {
        self.board = board
        positions = Array(repeating: 0, count: board.rows * board.cols)
        busyUntil = Array(repeating: 0, count: board.rows * board.cols)
    }

    var frame: Frame {
        var f = Frame(rows: board.rows, cols: board.cols)
        for (i, p) in positions.enumerated() { f[i / board.cols, i % board.cols] = board.drum.glyphs[Int(p)] }
        return f
    }
}

struct ConductorState: ~Copyable {
    var tracks: [Track]
    var heap = MinHeap()
    var histogram = LatenessHistogram()
    var running = true
    var idle = false

    init(tracks: [Track]) { self.tracks = tracks }

    /// Replaces the board's pending flips by a plan from where its modules are at t0: a flip in
    /// progress goes on and its module is free when it ends; every other module is free at t0.
    /// Returns the plan and the 90° instants of the flips in progress. A homing module's move
    /// stays in the plan (its output learns the flap to land on) but fires no flip here.
    mutating func replan(board b: Int, target: [UInt8], t0: Int64, style: TransitionStyle? = nil) -> (FlipPlan, [Int64]) {
        var track = tracks[b]
        let flip = track.board.timing.flip
        var states = zip(track.positions, track.busyUntil).map { p, busy in
            ModuleState(position: p, readyAt: max(0, busy - t0))
        }
        var kept: [Int64] = []
        heap.removeAll { e in
            guard Int(e.board) == b else { return false }
            let m = Int(e.module)
            let flipStart = e.instant - flip / 2
            if flipStart <= t0 {
                // In progress: it finishes, and the module plans on from the flap it reaches — a
                // landing not yet fired (homing, a calibration turn) from the flap it lands on, not
                // a flip past where the module was before its turn.
                e.remaining = 0
                let n = track.board.drum.count
                let reached = e.landing >= 0 ? Int(e.landing) : (Int(track.positions[m]) + Int(e.direction) + n) % n
                states[m] = ModuleState(position: UInt8(reached), readyAt: flipStart + flip - t0)
                kept.append(e.instant)
                return false
            }
            // Not begun: the module is free now (its old plan's start is no promise to keep —
            // taking it as "busy until then" pushed each re-plan later than the one before, and
            // quick re-plans with `together` held the board still for minutes: issue 39).
            return true
        }
        let plan = Planner.plan(rows: track.board.rows, cols: track.board.cols, from: states, to: target,
                                drum: track.board.drum, timing: track.board.timing, motion: track.board.motion,
                                style: style ?? track.board.style, place: track.board.place)
        var moving = 0
        for move in plan.moves where !track.homing.contains(Int(move.row) * track.board.cols + Int(move.col)) {
            heap.push(TimedFlip(instant: t0 + move.clack(0, flip: flip), board: Int32(b),
                                module: move.row * Int32(track.board.cols) + move.col,
                                flip: 0, remaining: move.flips - 1, direction: move.direction))
            moving += 1
        }
        track.pending = kept.count + moving + track.homing.count
        track.transition += 1
        track.transitionStart = t0
        tracks[b] = track
        return (plan, kept)
    }

    /// Drops the board's flips not yet started, and its homing turns from the timeline; the flips
    /// in progress go on. Returns how many.
    mutating func hold(board b: Int, at now: Int64) -> Int {
        let flip = tracks[b].board.timing.flip
        var kept = 0
        heap.removeAll { e in
            guard Int(e.board) == b else { return false }
            guard e.instant - flip / 2 <= now else { return true }
            e.remaining = 0
            kept += 1
            return false
        }
        // Homing turns are the outputs' to finish at a stop (their drain waits for them); what is
        // saved is where they leave the modules (`adoptOutputPositions`).
        tracks[b].homing = []
        tracks[b].pending = kept
        return kept
    }

    /// Fires every flip due at `now`, advancing positions; collects the events and the boards
    /// that settled.
    mutating func fire(upTo now: Int64, into events: inout [FlipEvent], settled: inout [(Int, Int, Frame)]) {
        while let e = heap.first, e.instant <= now {
            heap.popFirst()
            let b = Int(e.board), m = Int(e.module)
            let flip = tracks[b].board.timing.flip
            let n = tracks[b].board.drum.count
            let position = e.landing >= 0 ? Int(e.landing) : (Int(tracks[b].positions[m]) + Int(e.direction) + n) % n
            tracks[b].positions[m] = UInt8(position)
            tracks[b].busyUntil[m] = e.instant + flip / 2
            histogram.record(now - e.instant)
            let cols = tracks[b].board.cols
            events.append(FlipEvent(
                board: b, row: m / cols, col: m % cols, flip: Int(e.flip),
                glyph: tracks[b].board.drum.glyphs[position], transition: tracks[b].transition,
                transitionStart: tracks[b].transitionStart, planned: e.instant, actual: now,
                homed: e.landing >= 0, flaps: Int(e.flaps)))
            if e.remaining > 0 {
                var next = e
                next.instant += flip
                next.flip += 1
                next.remaining -= 1
                heap.push(next)
            } else {
                tracks[b].pending -= 1
                if tracks[b].pending == 0 { settled.append((b, tracks[b].transition, tracks[b].frame)) }
            }
        }
    }
}
