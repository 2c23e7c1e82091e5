import FlapClock
import FlapCore
import Foundation
import Synchronization

/// Plays flip plans in real time. A dedicated thread sleeps to absolute deadlines on
/// CLOCK_MONOTONIC and fires every flip at its 90° instant to the drivers; boards keep the
/// position of every module as the flips actually fired, so that a new target re-plans from
/// where each module physically is (a flip in progress finishes first).
public final class Conductor: HomingReport, Sendable {
    /// One board the conductor drives.
    public struct Board: Sendable {
        public var rows: Int
        public var cols: Int
        public var drum: Drum
        public var timing: FlipTiming
        public var motion: Motion
        /// The style of a transition that names none.
        public var style: TransitionStyle
        /// Where it sits in the grid it plays as one with (nil: on its own).
        public var place: GridPlace?
        public init(rows: Int, cols: Int, drum: Drum, timing: FlipTiming, motion: Motion, style: TransitionStyle = .classic,
                    place: GridPlace? = nil) {
            self.rows = rows; self.cols = cols; self.drum = drum; self.timing = timing; self.motion = motion; self.style = style
            self.place = place
        }
    }

    /// Real-time options of the wall (`RealtimeOptions`, of the clock module).
    public typealias Realtime = RealtimeOptions

    private let state: Mutex<ConductorState>
    private let drivers: [any FlipObserver]
    private let clackSinks: [any ClackSink]
    private let planSinks: [any MovePlanSink]
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    /// The PM QoS request held while the conductor runs (-1: none).
    private let wakeLatencyRequest = Atomic<Int32>(-1)
    /// Whether this conductor locked the process's memory (undone by `stop`).
    private let lockedMemory = Atomic<Bool>(false)
    /// Nanoseconds the thread has spun on the clock to land on deadlines.
    private let spun = Atomic<Int64>(0)
    /// Longest sleep before the thread looks at the timeline again; every new plan's first
    /// event lies at least half a flip (≥ 25 ms) ahead, so nothing is missed.
    static let horizon: Int64 = 10_000_000

    /// A conductor for these boards (indexed in this order), all blank at first, firing to these
    /// drivers. Call `start` to begin.
    public init(boards: [Board], drivers: [any FlipObserver], clackSinks: [any ClackSink] = [], planSinks: [any MovePlanSink] = []) {
        self.planSinks = planSinks
        self.drivers = drivers
        self.clackSinks = clackSinks
        self.state = Mutex(ConductorState(tracks: boards.map { Track(board: $0) }))
    }

    /// A sign of life from the real-time loop itself (a systemd watchdog ping): `beat` runs on
    /// the conductor's thread at least every `interval` nanoseconds, idle or not, for as long
    /// as the loop is not stuck.
    public struct Heartbeat: Sendable {
        public var interval: Int64
        public var beat: @Sendable () -> Void
        public init(interval: Int64, beat: @escaping @Sendable () -> Void) {
            self.interval = interval; self.beat = beat
        }
    }

    /// Starts the real-time thread. Returns the warnings of real-time options that could not be
    /// applied (the conductor runs regardless).
    public func start(realtime: Realtime = Realtime(), heartbeat: Heartbeat? = nil) -> [String] {
        let warnings = Mutex<[String]>([])
        start(threads: TimingThreads(realtime: realtime) { w in warnings.withLock { $0.append(w) } }, heartbeat: heartbeat)
        return warnings.withLock { $0 }
    }

    /// Starts the real-time thread (`flapd-conductor`) as `threads` start every timing thread,
    /// and holds the memory lock and wake-latency request they ask for; refusals are reported
    /// through `threads` before this returns.
    public func start(threads: TimingThreads, heartbeat: Heartbeat? = nil) {
        let ready = DispatchSemaphore(value: 0)
        let realtime = threads.realtime
        threads.start("conductor", stackSize: 1 << 20) { [self] granted in
            if realtime.lockMemory {
                if let refused = RealtimeSetup.lockMemory() { threads.report([refused]) } else {
                    lockedMemory.store(true, ordering: .releasing)
                }
            }
            if let micros = realtime.wakeLatencyMicros {
                switch RealtimeSetup.requestWakeLatency(micros) {
                case .success(let fd): wakeLatencyRequest.store(fd, ordering: .releasing)
                case .failure(let w): threads.report([w.message])
                }
            }
            ready.signal()
            run(heartbeat, sleeper: DeadlineSleeper(maxLead: granted.fifo ? Int64(realtime.spinMicros) * 1000 : 0))
            exited.signal()
        }
        ready.wait()
    }

    /// Lets every flip in progress finish and drops the rest — in its own queue and, at the same
    /// instant, in every plan sink (the hardware outputs) — so that no flap is left half-way and
    /// every output stops where the saved state says; returns how many flips were in progress. Boards whose last flip ends settle as usual.
    @discardableResult
    public func finishFlipsInProgress() -> Int {
        let now = MonotonicClock.now()
        let (boards, kept) = state.withLock { s in (s.tracks.count, (0..<s.tracks.count).reduce(0) { $0 + s.hold(board: $1, at: now) }) }
        // Every output stops by the same rule at the same instant.
        for b in 0..<boards { for sink in planSinks { sink.finish(board: b, at: now) } }
        return kept
    }

    /// Stops the thread after the flips already due; pending flips are dropped, so that no
    /// board is moving any more and `restore` takes where the outputs left the modules.
    public func stop() {
        state.withLock { $0.running = false }
        wake.signal()
        exited.wait()
        state.withLock { s in
            s.heap.removeAll { _ in true }
            for b in s.tracks.indices { s.tracks[b].pending = 0; s.tracks[b].homing = [] }
        }
        let fd = wakeLatencyRequest.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { RealtimeSetup.release(fd) }
        if lockedMemory.exchange(false, ordering: .acquiringAndReleasing) { RealtimeSetup.unlockMemory() }
    }

    /// A transition the conductor has taken on.
    public struct Transition: Sendable {
        /// The plan, in offsets from `start`.
        public var plan: FlipPlan
        /// Serial number of the transition on its board (as in `FlipEvent.transition`).
        public var number: Int
        /// Monotonic nanoseconds of its t0.
        public var start: Int64
    }

    /// Sets a new target for a board, given as drum indices (row-major), and plans it from
    /// where every module is at `start` (monotonic ns, default now) in `style` (default the
    /// board's). A flip in progress finishes first; flips not yet started are replaced.
    @discardableResult
    public func play(board: Int, target: [UInt8], start: Int64? = nil, style: TransitionStyle? = nil) -> Transition {
        let (transition, nothingMoves, frame, signal, kept, homing) = state.withLock { s in
            let t0 = start ?? MonotonicClock.now()
            let (plan, kept) = s.replan(board: board, target: target, t0: t0, style: style)
            let track = s.tracks[board]
            let signal = s.idle && track.pending > 0
            if signal { s.idle = false }
            return (Transition(plan: plan, number: track.transition, start: t0), track.pending == 0, track.frame, signal, kept, track.homing)
        }
        if signal { wake.signal() }
        if !clackSinks.isEmpty {
            let flip = transition.plan.timing.flip
            let cols = transition.plan.cols
            var clacks = kept
            for m in transition.plan.moves where !homing.contains(Int(m.row) * cols + Int(m.col)) {
                for k in 0..<Int(m.flips) { clacks.append(transition.start + m.clack(k, flip: flip)) }
            }
            for sink in clackSinks { sink.schedule(board: board, clacks: clacks, since: transition.start) }
        }
        for sink in planSinks { sink.planned(board: board, plan: transition.plan, transitionStart: transition.start) }
        if nothingMoves {
            for d in drivers { d.settled(board: board, transition: transition.number, frame: frame) }
        }
        return transition
    }

    /// Homes `modules` of a board (row-major; nil: every module) that its outputs can home — a
    /// transition of its own on the board's timeline: the board is moving until each has landed,
    /// each landing fires as a flip event (`homed`, with the flaps its turn passed: the trace,
    /// the journal, the page, MQTT and the flip counts see it), and the board settles once the
    /// last has landed and its other flips are done. A new target meanwhile plans no flip for a
    /// homing module; its output takes it to the newest target. Returns how many modules home.
    @discardableResult
    public func home(board: Int, modules: [Int]? = nil) -> Int {
        let count = state.withLock { $0.tracks[board].positions.count }
        let asked = (modules ?? Array(0..<count)).filter { (0..<count).contains($0) }
        // Counted as homing before the outputs start them (a landing can come at once); those
        // no output homes are let go after.
        let added = state.withLock { s in
            let new = asked.filter { !s.tracks[board].homing.contains($0) }
            s.tracks[board].homing.formUnion(new)
            s.tracks[board].pending += new.count
            if !new.isEmpty {
                s.tracks[board].transition += 1
                s.tracks[board].transitionStart = MonotonicClock.now()
            }
            return new
        }
        guard !added.isEmpty else { return 0 }
        var homed = Set<Int>()
        for sink in planSinks { homed.formUnion(sink.home(board: board, modules: added, report: self)) }
        let (settledNow, number, frame) = state.withLock { s in
            let none = added.filter { !homed.contains($0) && s.tracks[board].homing.contains($0) }
            s.tracks[board].homing.subtract(none)
            s.tracks[board].pending -= none.count
            return (!none.isEmpty && s.tracks[board].pending == 0, s.tracks[board].transition, s.tracks[board].frame)
        }
        if !homed.isEmpty {
            for d in drivers { d.homing(board: board, transition: number, modules: homed.sorted()) }
        }
        if settledNow {
            for d in drivers { d.settled(board: board, transition: number, frame: frame) }
        }
        return homed.count
    }

    /// Puts a turn that an output makes of its own accord — a calibration nudge or mark — on the
    /// board's timeline as homing is: the board moves until the module lands (`landed`). `start`
    /// starts the turn, with this conductor to hear its landing, or throws why not; then nothing
    /// changes. A module already homing or turning is refused by its output, not here.
    public func turn<E: Error>(board: Int, module: Int, start: (any HomingReport) throws(E) -> Void) throws(E) {
        let fresh = state.withLock { s in
            guard s.tracks.indices.contains(board), (0..<s.tracks[board].positions.count).contains(module),
                  s.tracks[board].homing.insert(module).inserted else { return false }
            s.tracks[board].pending += 1
            s.tracks[board].transition += 1
            s.tracks[board].transitionStart = MonotonicClock.now()
            return true
        }
        do { try start(self) } catch {
            if fresh {
                let settledNow = state.withLock { s in
                    guard s.tracks[board].homing.remove(module) != nil else { return false }
                    s.tracks[board].pending -= 1
                    return s.tracks[board].pending == 0
                }
                if settledNow {
                    let (number, frame) = state.withLock { ($0.tracks[board].transition, $0.tracks[board].frame) }
                    for d in drivers { d.settled(board: board, transition: number, frame: frame) }
                }
            }
            throw error
        }
        guard fresh else { return }
        let number = state.withLock { $0.tracks[board].transition }
        for d in drivers { d.homing(board: board, transition: number, modules: [module]) }
    }

    /// Whether a module's own turn (homing, `turn`) is over on the timeline: landed, and the
    /// landing fired — so what the board plans next starts from where it landed.
    public func turnOver(board: Int, module: Int) -> Bool {
        state.withLock { s in
            guard s.tracks.indices.contains(board) else { return true }
            return !s.tracks[board].homing.contains(module)
                && !s.heap.items.contains { Int($0.board) == board && Int($0.module) == module && $0.landing >= 0 }
        }
    }

    /// A homing turn ended (`HomingReport`): the landing fires on the conductor's thread, now.
    public func landed(board: Int, module: Int, flap: Int?, flaps: Int) {
        let signal = state.withLock { s in
            guard s.tracks.indices.contains(board), s.tracks[board].homing.remove(module) != nil else { return false }
            let landing = flap.flatMap { s.tracks[board].board.drum.glyphs.indices.contains($0) ? $0 : nil }
                ?? Int(s.tracks[board].positions[module])
            s.heap.push(TimedFlip(instant: MonotonicClock.now(), board: Int32(board), module: Int32(module), flip: 0, remaining: 0,
                                  direction: 1, landing: Int16(landing), flaps: Int32(flap == nil ? 0 : flaps)))
            let signal = s.idle
            s.idle = false
            return signal
        }
        if signal { wake.signal() }
    }

    /// Sets where a board's modules are (drum indices, row-major) — a restored state — without
    /// moving them. Ignored unless the board is still and the count matches.
    public func restore(board: Int, positions: [UInt8]) {
        state.withLock { s in
            guard s.tracks[board].pending == 0, positions.count == s.tracks[board].positions.count else { return }
            s.tracks[board].positions = positions
        }
    }

    /// Changes a board's timing, motion and style for the transitions planned from now on.
    public func update(board: Int, timing: FlipTiming, motion: Motion, style: TransitionStyle = .classic, place: GridPlace? = nil) {
        state.withLock { s in
            s.tracks[board].board.timing = timing
            s.tracks[board].board.motion = motion
            s.tracks[board].board.style = style
            s.tracks[board].board.place = place
        }
    }

    /// What the board shows now (flips fired so far).
    public func frame(board: Int) -> Frame { state.withLock { $0.tracks[board].frame } }

    /// Whether the board has flips still to fire or modules homing.
    public func isMoving(board: Int) -> Bool { state.withLock { $0.tracks[board].pending > 0 } }

    /// Lateness of every event fired so far.
    public var lateness: LatenessSummary { state.withLock { $0.histogram.summary } }
    /// Fired flips per lateness bin (`LatenessHistogram.binEdgesMicros`).
    public var latenessBins: [Int] { state.withLock { $0.histogram.bins() } }

    /// Nanoseconds the real-time thread has spun on the clock so far, landing on deadlines.
    public var spinTime: Int64 { spun.load(ordering: .relaxed) }

    private func run(_ heartbeat: Heartbeat?, sleeper: DeadlineSleeper) {
        var sleeper = sleeper
        var fired: [FlipEvent] = []
        var settled: [(Int, Int, Frame)] = []
        fired.reserveCapacity(256)
        var lastBeat: Int64 = 0
        while true {
            if let heartbeat {
                let now = MonotonicClock.now()
                if now - lastBeat >= heartbeat.interval { heartbeat.beat(); lastBeat = now }
            }
            let next: Int64? = state.withLock { s in
                guard s.running else { return -1 }
                if let first = s.heap.first { return first.instant }
                s.idle = true
                return nil
            }
            guard let next else {
                if let heartbeat { _ = wake.wait(timeout: .now() + .nanoseconds(Int(heartbeat.interval))) } else { wake.wait() }
                continue
            }
            if next < 0 { return }
            let now = MonotonicClock.now()
            if next > now + Conductor.horizon {
                MonotonicClock.sleep(until: now + Conductor.horizon)
                continue
            }
            let actual = sleeper.sleep(until: next)
            spun.store(sleeper.spun, ordering: .relaxed)
            state.withLock { s in s.fire(upTo: actual, into: &fired, settled: &settled) }
            for event in fired { for d in drivers { d.flip(event) } }
            for (board, transition, frame) in settled {
                for d in drivers { d.settled(board: board, transition: transition, frame: frame) }
            }
            fired.removeAll(keepingCapacity: true)
            settled.removeAll(keepingCapacity: true)
        }
    }
}
