import FlapCore
import FlapClock
import Foundation
import Synchronization

extension GPIODriver {
    /// Home sensors of a board: one input line a module (row by row), active low (hall-effect
    /// switches pull down near the magnet), and each module's offset in steps from its magnet to
    /// flap 0.
    public struct HomeSensors: Sendable {
        public var inputs: any GPIOInputs
        public var activeLow: Bool
        public var offsets: [Int]
        public var maxFailures: Int
        /// The board's power groups: homing turns start in batches that keep each under its limit.
        public var powerGroups: [PowerGroup]
        public init(inputs: any GPIOInputs, activeLow: Bool = true, offsets: [Int], maxFailures: Int = 3, powerGroups: [PowerGroup] = []) {
            self.inputs = inputs; self.activeLow = activeLow; self.offsets = offsets; self.maxFailures = maxFailures
            self.powerGroups = powerGroups
        }
    }

    /// One module's health, as the driver counts it, and the errors of its latest passes by its
    /// magnet (`HomeTracker.errors`: steps, positive when the drum came late, oldest first).
    public struct ModuleHealth: Sendable, Equatable {
        public var state: HomeTracker.State
        public var missed: Int, unexpected: Int, failures: Int
        public var magnetErrors: [Int] = []
    }

    /// Gives the board home sensors; call before `start`.
    public func attach(_ sensors: HomeSensors) {
        lock.lock()
        defer { lock.unlock() }
        self.sensors = sensors.inputs
        sensorsActiveLow = sensors.activeLow
        offsets = onTurn(sensors.offsets)
        homingGroups = sensors.powerGroups
        homes = target.indices.map { _ in
            HomeTracker(stepsPerRevolution: geometry.stepsPerRevolution, flaps: geometry.flaps, maxFailures: sensors.maxFailures)
        }
    }

    /// Sets every module's steps from its magnet to flap 0 (used from the next homing on).
    public func setOffsets(_ offsets: [Int]) {
        lock.lock()
        if offsets.count == target.count { self.offsets = onTurn(offsets) }
        lock.unlock()
    }

    /// Offsets as steps within one turn (0 …< steps a revolution), as `mark` saves them: a
    /// `calibration.json` is read as it is found, and an offset of 10¹² made a homing plan of
    /// 10¹² steps (Int.max overflowed, on the step thread) — the same place on the drum, taken so.
    func onTurn(_ offsets: [Int]) -> [Int] {
        let turn = geometry.stepsPerRevolution
        return offsets.map { ($0 % turn + turn) % turn }
    }

    public var moduleCount: Int { target.count }

    /// Each module's health; nil without home sensors.
    public var health: [ModuleHealth]? {
        lock.lock()
        defer { lock.unlock() }
        return homes?.map { ModuleHealth(state: $0.state, missed: $0.missed, unexpected: $0.unexpected, failures: $0.failures, magnetErrors: $0.errors) }
    }

    /// Homes those of `modules` that are not faulty, for the conductor (`Conductor.home`, which
    /// puts homing on the board's timeline): as `homeAll`, and each module's landing is reported
    /// to `report` once it is released — its flap, and the flaps its turn passed.
    public func home(board: Int, modules: [Int], report: any HomingReport) -> [Int] {
        guard board == self.board else { return [] }
        lock.lock()
        defer { lock.unlock() }
        guard homes != nil else { return [] }
        let chosen = modules.filter { target.indices.contains($0) && homes?[$0].state != .faulty }
        homingReport = report
        for m in chosen {
            landingDue.insert(m)
            homingSteps[m] = 0
            if !homingQueue.contains(m) && homes?[m].state != .homing { homingQueue.append(m) }
        }
        pumpHoming(now: MonotonicClock.now())
        lock.broadcast()
        return chosen
    }

    /// The modules whose place the step journal did not know exactly (a kill or power cut caught
    /// them in a homing turn, or between a step's write and its store: in flight), and that a
    /// home sensor can find; the daemon homes them at start (`Conductor.home`).
    public var uncertainModules: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return uncertain()
    }

    /// Caller holds the lock.
    private func uncertain() -> [Int] {
        guard homes != nil, let journal, let restored = journal.restored else { return [] }
        let inFlight = journal.restoredInFlight
        return target.indices.filter { (restored[$0] == nil || inFlight.contains($0)) && homes?[$0].state != .faulty }
    }

    /// Homes every module that is not faulty: each turns forward to its magnet, on by its offset
    /// to flap 0, and on to the flap it should show — so the board ends as it was meant to be.
    /// Modules of a power group start in turn, never more turning at once than it allows. (The
    /// daemon homes through the conductor, `home(board:modules:report:)`; this and
    /// `homeUncertain` are the driver's own, for its tests.)
    public func homeAll() {
        lock.lock()
        defer { lock.unlock() }
        homingQueue = target.indices.filter { homes?[$0].state != .faulty }
        pumpHoming(now: MonotonicClock.now())
        lock.broadcast()
    }

    /// Homes the modules whose place the step journal did not know exactly (a kill or power cut
    /// caught them in a homing turn, or between a step's write and its store: in flight); the
    /// others are where it says. Returns how many.
    @discardableResult
    public func homeUncertain() -> Int {
        lock.lock()
        defer { lock.unlock() }
        homingQueue = uncertain()
        guard !homingQueue.isEmpty else { return 0 }
        pumpHoming(now: MonotonicClock.now())
        lock.broadcast()
        return homingQueue.count + target.indices.filter { homes?[$0].state == .homing }.count
    }

    /// Starts the queued homing turns that their power groups have room for (a module turning
    /// for any reason counts). Caller holds the lock.
    func pumpHoming(now: Int64) {
        guard !homingQueue.isEmpty || !turnQueue.isEmpty else { return }
        let cols = self.cols
        func turning(_ m: Int) -> Bool { !pending[m].isEmpty || releases[m] != nil }
        func full(_ m: Int) -> Bool {
            homingGroups.contains { g in
                g.contains(row: m / cols, col: m % cols)
                    && target.indices.filter { g.contains(row: $0 / cols, col: $0 % cols) && turning($0) }.count >= g.maxMoving
            }
        }
        homingQueue.removeAll { m in
            if full(m) { return false }
            startHoming(m, now: now)
            return true
        }
        turnQueue.removeAll { m in
            if full(m) { return false }
            startTurn(m, now: now)
            return true
        }
    }

    /// The pace of a homing turn (and of finishing a flip a kill left half-way): the steps of one
    /// flip in one flip interval.
    var stepInterval: Int64 { lastFlip * Int64(geometry.flaps) / Int64(geometry.stepsPerRevolution) }

    /// Caller holds the lock.
    func startHoming(_ m: Int, now: Int64) {
        guard homes != nil, homes![m].state != .faulty else { return }
        homes![m].startHoming()
        flips[m] = []
        place[m] = nil
        journal?.set(m, nil, phase: engine.phase(of: m))
        let turn = geometry.stepsPerRevolution * 3 / 2 + 1
        pending[m] = (1...turn).reversed().map { now + Int64($0) * stepInterval }
        releases[m] = nil
    }

    /// What a module's sensor and steps said. Caller holds the lock.
    func handle(_ event: HomeTracker.Event, module m: Int, now: Int64) {
        guard let tracker = homes?[m] else { return }
        switch event {
        case .homed:
            // At the magnet (`count` steps ago, when its edge was read late): on by the offset
            // to flap 0, then to the flap it should show.
            var steps = offsets[m] + geometry.boundary(target[m]) - tracker.count
            if steps < 0 {
                // Its edge was read after the drum had passed the flap to land on (a module whose
                // flap 0 sits at its magnet, on a starved machine): forward only, on round to it.
                notes.append("module \(m / cols),\(m % cols) met its magnet \(tracker.count) steps before the sensor was read, past the flap to land on: on round to it")
            }
            while steps < 0 { steps += geometry.stepsPerRevolution }
            let turn = geometry.stepsPerRevolution
            place[m] = ((tracker.count - offsets[m]) % turn + turn) % turn
            pending[m] = (0..<steps).reversed().map { now + Int64($0 + 1) * stepInterval }
            releases[m] = now + Int64(steps + 1) * stepInterval
        case .passed(let error):
            makeGood(error, module: m, now: now)
        case .missed, .unexpected, .notFound:
            let what = switch event {
            case .missed: "missed its home pulse"
            case .unexpected: "came to its magnet \(describe(tracker.errors.last ?? 0)), more than a quarter flap (\(tracker.window))"
            default: "found no home pulse in a turn and a half"
            }
            if tracker.state == .faulty {
                notes.append("module \(m / cols),\(m % cols) \(what): faulty after \(tracker.failures) failures, left still")
                pending[m] = []
                releases[m] = now
            } else {
                notes.append("module \(m / cols),\(m % cols) \(what): homing it again")
                startHoming(m, now: now)
            }
        }
    }

    /// An error in words: "3 steps late", "1 step early".
    private func describe(_ error: Int) -> String {
        "\(abs(error)) step\(abs(error) == 1 ? "" : "s") \(error >= 0 ? "late" : "early")"
    }

    /// A pass by the magnet `error` steps late (the drum fell behind its steps) or early: where the
    /// driver had the module moves by the error, and its steps still to come are lengthened or
    /// shortened so that it lands on its flap all the same (a module that went past it goes on
    /// round). Caller holds the lock.
    func makeGood(_ error: Int, module m: Int, now: Int64) {
        guard error != 0, let at = place[m] else { return }
        let turn = geometry.stepsPerRevolution
        place[m] = ((at - error) % turn + turn) % turn
        journal?.set(m, place[m], phase: engine.phase(of: m))
        land(m, now: now)
    }

    /// Lengthens or shortens a module's steps still to come so that they end on its target
    /// flap's edge from where the driver has it — after a pass made good, and after a plan (whose
    /// steps assume the module stands on a flap's edge, which a pass made good mid-move may have
    /// cut short). Caller holds the lock.
    func land(_ m: Int, now: Int64) {
        guard let at = place[m] else { return }
        let turn = geometry.stepsPerRevolution
        let needed = ((geometry.boundary(target[m]) - at - pending[m].count) % turn + turn) % turn
        guard needed != 0 else { return }
        if turn - needed <= pending[m].count, turn - needed < needed {
            pending[m].removeFirst(turn - needed)  // the latest steps: soonest last
            if pending[m].isEmpty { releases[m] = now }
        } else {
            let after = max(pending[m].first ?? now, now)
            pending[m] = (1...needed).reversed().map { after + Int64($0) * stepInterval } + pending[m]
            releases[m] = max(releases[m] ?? now, pending[m][0] + stepInterval)
        }
    }

    /// The sensors' thread: every active edge goes to its module's tracker, placed by its own
    /// instant; after each read, every edge up to that edge (or up to when the read began, when
    /// none came) has been read, so an overdue pulse is missed.
    func startSensing(_ threads: TimingThreads) {
        guard let sensors else { return }
        let started = threads.start("gpio-home") { [self] _ in
            while true {
                lock.lock()
                let go = running
                lock.unlock()
                guard go else { return }
                let asked = MonotonicClock.now()
                let edge: SensorEdge?
                do { edge = try sensors.edge(timeoutNanos: 50_000_000) } catch {
                    log("\(error)")
                    MonotonicClock.sleep(until: MonotonicClock.now() + 1_000_000_000)
                    continue
                }
                lock.lock()
                let now = MonotonicClock.now()
                if let edge, edge.rising != sensorsActiveLow, let event = homes?[edge.index].pulse(at: edge.at) {
                    handle(event, module: edge.index, now: now)
                }
                // An edge stamped within the last millisecond may not be queued yet.
                let readUpTo = edge.map { min($0.at, now) } ?? asked - 1_000_000
                for m in homes?.indices ?? 0..<0 {
                    if let event = homes?[m].read(upTo: readUpTo) { handle(event, module: m, now: now) }
                }
                lock.broadcast()
                let said = takeNotes()
                lock.unlock()
                for note in said { log(note) }
            }
        }
        sensorThread.withLock { $0 = started }
    }

    /// The notes gathered so far, taken; the caller holds the lock and logs them once it lets go.
    func takeNotes() -> [String] {
        defer { notes = [] }
        return notes
    }
}
