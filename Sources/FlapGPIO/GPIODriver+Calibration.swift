import FlapCore
import FlapClock

/// Live calibration (issue 35): the maker turns one module on, a step or a flap at a time, and
/// says which flap it shows. Each turn is put on the board's timeline as a homing turn is (the
/// conductor hears its landing through `HomingReport`).
extension GPIODriver {
    /// Why a module cannot be turned or marked now.
    public enum CalibrationRefusal: Error, Equatable, Sendable, CustomStringConvertible {
        case noSuchModule(Int)
        case busy(Int)
        case faulty(Int)
        case notHomed(Int)

        public var description: String {
            switch self {
            case .noSuchModule(let m): "no module \(m) on this board"
            case .busy(let m): "module \(m) is still turning (or homing): wait for it to land"
            case .faulty(let m): "module \(m) is faulty (its home sensor failed): mend it, then home it"
            case .notHomed(let m): "module \(m) has not met its magnet since flapd started: home it first (the magnet is what its offset counts from)"
            }
        }
    }

    /// Where a module stands once the steps it has still to take are out, for calibration: steps
    /// from flap 0's edge as the driver has it, and — homed, with a home sensor — steps past its
    /// magnet and its offset.
    public struct CalibrationPlace: Sendable, Equatable {
        public var place: Int?
        public var stepsFromMagnet: Int?
        public var offset: Int?
    }

    public func calibrationPlace(of m: Int) -> CalibrationPlace? {
        lock.lock()
        defer { lock.unlock() }
        guard target.indices.contains(m) else { return nil }
        let turn = geometry.stepsPerRevolution, coming = pending[m].count
        let homed = homes?[m].state == .normal
        return CalibrationPlace(place: place[m].map { ($0 + coming) % turn }, stepsFromMagnet: homed ? homes.map { ($0[m].count + coming) % turn } : nil,
                                offset: homes == nil ? nil : offsets[m])
    }

    /// Turns module `m` on by `steps` (1 or more, forward only) at the homing pace; its landing
    /// is reported to `report` once it is released.
    public func nudge(board: Int, module m: Int, steps: Int, report: any HomingReport) throws(CalibrationRefusal) {
        lock.lock()
        defer { lock.unlock() }
        try checkStill(board: board, m)
        let now = MonotonicClock.now()
        pending[m] = (1...max(1, steps)).reversed().map { now + Int64($0) * stepInterval }
        releases[m] = now + Int64(max(1, steps) + 1) * stepInterval
        startLanding(m, report: report)
        lock.broadcast()
    }

    /// Module `m` shows flap `flap` now, the maker says: from here the driver has it on that
    /// flap's edge, and — homed, with a home sensor — its offset becomes its steps from the magnet
    /// less that edge (returned, for saving). Then it turns on to the flap it should show, its
    /// landing reported to `report`.
    public func mark(board: Int, module m: Int, showing flap: Int, report: any HomingReport) throws(CalibrationRefusal) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        try checkStill(board: board, m)
        var offset: Int?
        if let tracker = homes?[m] {
            guard tracker.state == .normal else { throw .notHomed(m) }
            let turn = geometry.stepsPerRevolution
            offset = ((tracker.count - geometry.boundary(flap)) % turn + turn) % turn
            offsets[m] = offset!
        }
        place[m] = geometry.boundary(flap) % geometry.stepsPerRevolution
        journal?.set(m, place[m], phase: engine.phase(of: m))
        land(m, now: MonotonicClock.now())
        if pending[m].isEmpty { releases[m] = MonotonicClock.now() }
        startLanding(m, report: report)
        lock.broadcast()
        return offset
    }

    /// Caller holds the lock.
    private func checkStill(board: Int, _ m: Int) throws(CalibrationRefusal) {
        guard board == self.board, target.indices.contains(m) else { throw .noSuchModule(m) }
        if homes?[m].state == .faulty { throw .faulty(m) }
        guard pending[m].isEmpty, releases[m] == nil, homes?[m].state != .homing, !homingQueue.contains(m), !landingDue.contains(m) else {
            throw .busy(m)
        }
    }

    /// The module's turn is reported once it is released, as a homing turn's. Caller holds the lock.
    private func startLanding(_ m: Int, report: any HomingReport) {
        homingReport = report
        landingDue.insert(m)
        homingSteps[m] = 0
    }
}
