import FlapWiring
import FlapCore
import FlapClock
import Foundation
import Synchronization

/// One board of stepper modules on GPIO lines: each plan becomes every module's step instants
/// (`StepGeometry`), which a small thread of its own plays out — it sleeps to each instant with
/// `clock_nanosleep(TIMER_ABSTIME)` and writes the lines `LineEngine` says. A new plan replaces a
/// module's steps from its new start on (the flip in progress finishes first, as planned).
/// (`@unchecked Sendable`: the plan, the steps and the homing state are read and written under
/// `lock`, which the step and sensor threads take for each batch; the threads' handles are in
/// `Mutex`es.)
public final class GPIODriver: MovePlanSink, @unchecked Sendable {
    /// What has happened on the lines.
    public struct Counters: Sendable, Equatable {
        public var steps = 0
        public var writes = 0
        public var failures = 0
        /// The most a step went out after its instant, in µs.
        public var maxLateMicros: Int64 = 0
    }

    public let board: Int
    let cols: Int
    let geometry: StepGeometry
    /// How long each write is held (a slow chain's).
    private let hold: Int64
    private let outputs: any GPIOOutputs
    let log: @Sendable (String) -> Void
    let lock = NSCondition()
    /// What the driver has to say, gathered under `lock` and logged by whoever lets it go
    /// (`takeNotes`): nothing is logged under the lock.
    var notes: [String] = []
    var engine: LineEngine
    /// Each module's step instants still to come (monotonic ns), soonest last, so the step
    /// thread takes one off the end rather than shifting the whole list.
    var pending: [[Int64]]
    /// STEP/DIR: modules whose pulse ends at that instant.
    private var pulses: [(at: Int64, module: Int)] = []
    /// Modules to release (coils off) at that instant, once their move is over.
    var releases: [Int: Int64] = [:]
    private var enabled = false
    var running = false
    private var counters = Counters()
    /// How late each step went out against its planned instant.
    private var stepLate = LatenessHistogram()
    private let thread = Mutex<TimingThread?>(nil)
    /// Home sensors, when the board has them: one tracker a module, the sensors' lines, and
    /// each module's steps from its magnet to flap 0 (`flapd calibrate`).
    var homes: [HomeTracker]?
    var sensors: (any GPIOInputs)?
    var sensorsActiveLow = true
    var offsets: [Int] = []
    let sensorThread = Mutex<TimingThread?>(nil)
    /// Each module's flap once its planned move ends (where a homing turn takes it).
    var target: [Int]
    /// Each module's planned flips not yet known to be over: when each starts, and the flap it
    /// leaves (soonest first) — so that a new plan or a stop cuts the steps at a flip's edge.
    var flips: [[(start: Int64, from: Int)]]
    /// The planned instant of each module's last step written to the lines.
    var lastStep: [Int64]
    /// The flip interval of the latest plan (homing turns step at its pace).
    var lastFlip: Int64 = 120_000_000
    /// Each module's place on its drum in steps from flap 0's edge (nil: unknown, as in a
    /// homing turn), as the steps taken up so far leave it; the journal holds it once written.
    var place: [Int?]
    var journal: StepJournal?
    /// Modules waiting for room in their power group to home, and the groups.
    var homingQueue: [Int] = []
    var homingGroups: [PowerGroup] = []
    /// Homing turns the conductor asked for (`home(board:modules:report:)`): each is reported
    /// to it once its module is released, with the steps its turn took.
    var homingReport: (any HomingReport)?
    var landingDue: Set<Int> = []
    var homingSteps: [Int]
    /// Landings gathered under the lock, reported by the step thread once it lets go.
    var landings: [(module: Int, flap: Int?, flaps: Int)] = []
    /// The self-test (`selfTest`): modules waiting for room in their power group to turn once
    /// round, those turning (when each began, its passes by then, its planned time), and what
    /// each turn measured.
    var turnQueue: [Int] = []
    var turning: [Int: (began: Int64, passes: Int, planned: Int64)] = [:]
    var turnResultsSoFar: [Int: TurnResult] = [:]

    /// `flip`: the board's flip interval, the pace of homing turns until a plan says otherwise.
    public init(board: Int, rows: Int, cols: Int, wiring: GPIOWiring, geometry: StepGeometry, flip: Int64 = 120_000_000,
                outputs: any GPIOOutputs, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.board = board
        self.cols = cols
        self.geometry = geometry
        hold = wiring.holdNanos
        self.outputs = outputs
        self.log = log
        engine = LineEngine(wiring: wiring, modules: rows * cols)
        pending = Array(repeating: [], count: rows * cols)
        target = Array(repeating: 0, count: rows * cols)
        flips = Array(repeating: [], count: rows * cols)
        lastStep = Array(repeating: .min, count: rows * cols)
        place = Array(repeating: nil, count: rows * cols)
        homingSteps = Array(repeating: 0, count: rows * cols)
        lastFlip = flip
    }

    public var stats: Counters { lock.lock(); defer { lock.unlock() }; return counters }
    /// Every step's lateness against the plan (when the thread took it up to write it).
    public var stepLateness: LatenessSummary { lock.lock(); defer { lock.unlock() }; return stepLate.summary }
    /// Step edges per lateness bin (`LatenessHistogram.binEdgesMicros`).
    public var stepLatenessBins: [Int] { lock.lock(); defer { lock.unlock() }; return stepLate.bins() }

    /// Whether every module has finished its steps and been released.
    public var idle: Bool {
        lock.lock(); defer { lock.unlock() }
        return pending.allSatisfy(\.isEmpty) && pulses.isEmpty && releases.isEmpty && homingQueue.isEmpty && turnQueue.isEmpty && !writing
    }
    /// The thread is writing what it took from the queues (idle only once it is written).
    private var writing = false

    /// Keeps every module's place, step by step, in `journal` (call before `start`).
    public func attach(journal: StepJournal) {
        lock.lock()
        self.journal = journal
        lock.unlock()
    }

    /// Writes the step journal's pages to disk (not on the real-time path).
    public func flushJournal() { journal?.flush() }

    /// The flap each module stands on as its steps so far leave it, a flip in progress counted
    /// as finished (nil: unknown, as in a homing turn).
    public var flaps: [Int?] {
        lock.lock(); defer { lock.unlock() }
        return place.map { $0.map { geometry.flap(finishing: $0).flap } }
    }

    /// The flap each module stands on by its step journal once a flip caught half-way by a kill
    /// is finished (`start` finishes it); nil for a module the journal does not know, or
    /// without a journal that held this board.
    public var journaledFlaps: [Int?]? {
        journal?.restored?.map { $0.map { geometry.flap(finishing: $0).flap } }
    }

    /// Starts with the modules meant to show `targets` (drum indices, row by row: the board's
    /// target, restored or already set) — where a homing turn takes them — standing on
    /// `positions` (the conductor's, after a restore) unless the step journal knows better: a
    /// module it left between two flaps steps on to the next at once. The step thread
    /// (`flapd-gpio`) and the sensors' (`flapd-gpio-home`) start as `threads` start them.
    public func start(targets: [UInt8]? = nil, positions: [UInt8]? = nil, threads: TimingThreads = .plain) {
        lock.lock()
        running = true
        if let targets, targets.count == target.count { target = targets.map(Int.init) }
        let restored = journal?.restored, inFlight = journal?.restoredInFlight ?? []
        let coils = switch engine.wiring.kind { case .unipolar, .shiftChain: true; case .stepDir, .max7219: false }
        let now = MonotonicClock.now()
        for m in place.indices {
            // The rotor stands at the coil pattern the last run energised last.
            if let phase = journal?.restoredPhases[m] { engine.setPhase(m, phase) }
            // A coil motor caught in flight stands at the journal's pattern or the one before:
            // that step is made again — energising the journal's pattern takes the rotor there
            // either way (a STEP pulse cannot be: it is taken as made).
            let redo = coils && inFlight.contains(m) && restored?[m] != nil
            if let s = restored?[m] {
                let again = redo ? 1 : 0
                place[m] = (s - again + geometry.stepsPerRevolution) % geometry.stepsPerRevolution
                if redo { engine.setPhase(m, engine.phase(of: m) - 1) }
                let left = geometry.flap(finishing: s).stepsLeft + again
                pending[m] = (0..<left).reversed().map { now + Int64($0 + 1) * stepInterval }
                if left > 0 { releases[m] = now + Int64(left + 1) * stepInterval }
            } else {
                place[m] = geometry.boundary(Int(positions.flatMap { $0.indices.contains(m) ? $0[m] : nil } ?? 0)) % geometry.stepsPerRevolution
            }
            // A step made again leaves the journal as it was (in flight) until it is written.
            if !redo { journal?.set(m, place[m], phase: engine.phase(of: m)) }
        }
        lock.unlock()
        startSensing(threads)
        thread.withLock { $0 = threads.start("gpio") { [self] _ in loop() } }
    }

    /// Stops after the steps still planned (after `finish`: each module's flip in progress;
    /// homing turns too) have gone out and the modules are released — a flap is never left
    /// half-way — waiting at most `drainSeconds` (within the unit's `TimeoutStopSec=15`).
    public func stop(drainSeconds: Double = 10) {
        drain(seconds: drainSeconds) { idle }
        lock.lock(); running = false; lock.broadcast(); lock.unlock()
        thread.withLock { $0 }?.join()
        sensorThread.withLock { $0 }?.join()
    }

    public func planned(board: Int, plan: FlipPlan, transitionStart: Int64) {
        guard board == self.board else { return }
        let flip = plan.timing.flip
        // Worked out before the lock is taken: the step thread never waits for the arithmetic.
        let moves = plan.moves.map { m in
            (module: Int(m.row) * cols + Int(m.col), move: m,
             steps: geometry.stepInstants(of: m, flip: flip).reversed().map { transitionStart + $0 },
             flips: (0..<Int(m.flips)).map { k in
                 (start: transitionStart + m.flipStart(k, flip: flip), from: k == 0 ? Int(m.from) : m.position(afterFlip: k - 1, drumCount: geometry.flaps))
             })
        }
        lock.lock()
        lastFlip = flip
        // Every module: flips not started by now are replaced (the conductor's rule). A plan
        // delivered late can find some of them begun on the lines.
        var begun = Set<Int>()
        for module in pending.indices {
            flips[module].removeAll { $0.start + flip <= transitionStart }
            if dropFlips(of: module, after: transitionStart) { begun.insert(module) }
        }
        let caught = begun.count
        for (module, m, var steps, moveFlips) in moves {
            target[module] = Int(m.to)
            // A homing turn ends on the newest target; a faulty module stays still.
            if isHomingOrFaulty(module) { continue }
            // So does a turn the conductor is waiting on (the last steps of a homing turn, a
            // calibration turn, a self-test's): the conductor plans no flip for it, and its
            // landing is where the board wants it — it turns on from where its turn leaves it.
            if landingDue.contains(module) {
                begun.remove(module)
                land(module, now: transitionStart)
                continue
            }
            let caughtUp = begun.remove(module) != nil
            if caughtUp { steps = stepsFromMotor(of: module, to: Int(m.to), planned: steps) }
            // What is left pending ends before the move starts (dropFlips took the rest), but for
            // the steps that finish a flip a kill left half-way: those go out too, interleaved.
            if let first = steps.last, let last = pending[module].first, first <= last {
                pending[module] = (steps + pending[module]).sorted(by: >)
            } else {
                pending[module] = steps + pending[module]
            }
            flips[module] += moveFlips
            releases[module] = transitionStart + m.end(flip: flip)
            if caughtUp, let last = steps.first { releases[module] = max(releases[module]!, last + stepInterval) }
            // A module whose pass by its magnet was made good lands by its place, not the plan's count.
            if homes != nil, !caughtUp { land(module, now: transitionStart) }
        }
        // A module the plan leaves where the conductor has it, with a flip begun: it turns on
        // round to that flap (forward only), rather than stand between two.
        for module in begun where !isHomingOrFaulty(module) {
            let turn = stepsFromMotor(of: module, to: target[module], planned: [])
            guard let last = turn.first else { continue }
            pending[module] = turn + pending[module]
            releases[module] = last + stepInterval
        }
        lock.broadcast()
        lock.unlock()
        if caught > 0 {
            let late = (MonotonicClock.now() - transitionStart) / 1_000_000
            log("a plan came \(late) ms after its start: flips it replaces had begun on the lines of \(caught) modules; they go on from where their motors are")
        }
    }

    /// Whether a module is homing or faulty: a plan does not move it. Caller holds the lock.
    private func isHomingOrFaulty(_ module: Int) -> Bool {
        guard let state = homes?[module].state else { return false }
        return state == .homing || state == .faulty
    }

    /// The steps that take a module from where its motor will be once its pending steps are
    /// out to flap `flap`'s edge: the plan's own (`planned`, soonest last) less those its begun
    /// flip already took — the module waits at its step for the plan to catch up — or, when it
    /// went past, the plan's and then on round at the homing pace. Caller holds the lock.
    private func stepsFromMotor(of module: Int, to flap: Int, planned steps: [Int64]) -> [Int64] {
        guard let place = place[module] else { return steps }
        let revolution = geometry.stepsPerRevolution
        let end = place + pending[module].count
        let needed = ((geometry.boundary(flap) - end) % revolution + revolution) % revolution
        if needed <= steps.count { return Array(steps.dropLast(steps.count - needed)) }
        let after = max(steps.first ?? .min, pending[module].first ?? .min, MonotonicClock.now())
        return (1...(needed - steps.count)).reversed().map { after + Int64($0) * stepInterval } + steps
    }

    public func finish(board: Int, at instant: Int64) {
        guard board == self.board else { return }
        lock.lock()
        homingQueue = []
        for module in pending.indices { dropFlips(of: module, after: instant, keepingBegun: true) }
        lock.broadcast()
        lock.unlock()
    }

    /// Drops a module's flips that start after `instant`, with their steps: it then ends on the
    /// flap the first of them would have left. At a stop (`keepingBegun`), a flip whose steps
    /// have begun on the lines is finished, never cut: a stop told late, as a loaded machine
    /// tells it, must not leave a drum between two flaps, and the daemon then saves where the
    /// motors stopped. A new plan cuts where the conductor does; when it came late and the cut flip
    /// had begun, `planned` counts the steps taken (`stepsFromMotor`). Caller holds the lock.
    /// Returns whether the flip it cut had begun on the lines (only a late plan cuts one).
    @discardableResult
    private func dropFlips(of module: Int, after instant: Int64, keepingBegun: Bool = false) -> Bool {
        let begun = keepingBegun ? max(instant, lastStep[module]) : instant
        guard let i = flips[module].firstIndex(where: { $0.start > begun }) else { return false }
        let cut = flips[module][i]
        flips[module].removeSubrange(i...)
        pending[module].removeAll { $0 >= cut.start }
        target[module] = cut.from
        // Released after the flip in progress, or at once when it had not begun.
        if releases[module] != nil { releases[module] = pending[module].isEmpty ? instant : cut.start }
        return lastStep[module] >= cut.start
    }

    /// The next instant something is due, if any.
    private var nextInstant: Int64? {
        let steps = pending.lazy.compactMap(\.last).min()
        return [steps, pulses.map(\.at).min(), releases.values.min()].compactMap { $0 }.min()
    }

    private func loop() {
        lock.lock()
        while running {
            guard lock.waitForDue(nextInstant) else { continue }
            let (writes, steps) = due(now: MonotonicClock.now())
            let journal = self.journal
            writing = true
            let said = takeNotes()
            let landed = landings, report = homingReport
            landings = []
            lock.unlock()
            var failed: [String] = []
            for (i, levels) in writes.enumerated() {
                // The write that steps: its places in flight before it, made after it — a kill
                // between the two stores leaves the modules marked in flight (StepJournal).
                if i == steps.write { for (m, place, phase) in steps.places { journal?.set(m, place, phase: phase, inFlight: true) } }
                do { try outputs.write(levels) } catch { failed.append("\(error)") }
                if i == steps.write { for (m, place, phase) in steps.places { journal?.set(m, place, phase: phase) } }
                if hold > 0 { MonotonicClock.sleep(until: MonotonicClock.now() + hold) }
            }
            // Logged once the round's writes are on the lines: a note never delays a step.
            for note in said + failed { log(note) }
            for l in landed { report?.landed(board: board, module: l.module, flap: l.flap, flaps: l.flaps) }
            lock.lock()
            writing = false
            counters.writes += writes.count
            counters.failures += failed.count
        }
        lock.unlock()
    }

    /// Everything due by `now`, in order: pulses end, modules step (one step each: a late
    /// module's next step waits for the next round, so every pulse is whole), idle modules
    /// are released. Returns the level vectors to write, and which of them moves the motors
    /// with the places (and coil phases) it takes them to.
    private func due(now: Int64) -> ([[Bool]], steps: (write: Int, places: [(Int, Int?, Int)])) {
        var out: [[Bool]] = []
        let ending = pulses.filter { $0.at <= now }.map(\.module)
        if !ending.isEmpty {
            pulses.removeAll { $0.at <= now }
            out += engine.endPulse(ending)
        }
        let pulsing = Set(pulses.map(\.module))
        var stepping: [Int] = []
        var stepWrite = -1
        for m in pending.indices where !pulsing.contains(m) {
            guard let t = pending[m].last, t <= now else { continue }
            pending[m].removeLast()
            lastStep[m] = t
            stepping.append(m)
            // A late thread can find the release due with the last step: the motor gets its
            // step interval to follow before it is let go.
            if let r = releases[m] { releases[m] = max(r, now + stepInterval) }
            place[m] = place[m].map { ($0 + 1) % geometry.stepsPerRevolution }
            counters.steps += 1
            if landingDue.contains(m) { homingSteps[m] += 1 }
            if let event = homes?[m].stepped(at: now) { handle(event, module: m, now: now) }
            counters.maxLateMicros = max(counters.maxLateMicros, (now - t) / 1000)
            stepLate.record(now - t)
        }
        if !stepping.isEmpty {
            if !enabled { out += engine.enable(true, modules: Array(pending.indices)); enabled = true }
            out += engine.step(stepping)
            stepWrite = out.count - 1 - engine.writesAfterTheMove  // a chain's motors move as its latch rises
            if case .stepDir(let s) = engine.wiring.kind {
                pulses += stepping.map { (now + s.pulseNanos, $0) }
            }
        }
        let releasing = releases.filter { $0.value <= now && pending[$0.key].isEmpty && !pulsing.contains($0.key) }.map(\.key).sorted()
        if !releasing.isEmpty {
            for m in releasing { releases[m] = nil }
            finishTurns(releasing, now: now)
            // A homing turn the conductor asked for is over once its module is released.
            for m in releasing where landingDue.contains(m) && homes?[m].state != .homing && !homingQueue.contains(m) {
                landingDue.remove(m)
                landings.append((m, place[m].map { geometry.flap(finishing: $0).flap }, homingSteps[m] * geometry.flaps / geometry.stepsPerRevolution))
            }
            out += engine.release(releasing)
            pumpHoming(now: now)
            if releases.isEmpty, pending.allSatisfy(\.isEmpty), enabled {
                out += engine.enable(false, modules: Array(pending.indices))
                enabled = false
            }
        }
        return (out, (stepWrite, stepping.map { ($0, place[$0], engine.phase(of: $0)) }))
    }
}
