import FlapClock
import FlapCore

/// What one module's self-test turn measured (issue 35, item 4).
public struct TurnResult: Sendable, Equatable {
    /// How long the turn took, until the module was let go (as the step thread found it: late
    /// when the machine is starved), and how long it was planned to take (the homing pace).
    public var seconds: Double
    public var plannedSeconds: Double
    /// The error of its pass by the magnet in the turn (`HomeTracker.errors`), if it passed one.
    public var magnetError: Int?
    /// Whether it has a home sensor, and the module's state after the turn.
    public var hasSensor: Bool
    public var state: HomeTracker.State?
}

/// The self-test (issue 35, item 4): every module turns once round at the homing pace, batched by
/// its power group as homing is, each turn a transition on the board's timeline (reported to
/// `report` as it lands), and ends on the flap it stood on. What each turn measured is kept.
extension GPIODriver {
    /// Queues a whole turn of each of `modules` that is still (one turning, homing or faulty is
    /// left out) and returns those queued; earlier results of those modules are dropped.
    public func selfTest(board: Int, modules: [Int], report: any HomingReport) -> [Int] {
        guard board == self.board else { return [] }
        lock.lock()
        defer { lock.unlock() }
        let chosen = modules.filter { m in
            target.indices.contains(m) && pending[m].isEmpty && releases[m] == nil && homes?[m].state != .faulty
                && homes?[m].state != .homing && !homingQueue.contains(m) && !turnQueue.contains(m) && !landingDue.contains(m)
        }
        homingReport = report
        for m in chosen {
            turnResultsSoFar[m] = nil
            landingDue.insert(m)
            homingSteps[m] = 0
            turnQueue.append(m)
        }
        pumpHoming(now: MonotonicClock.now())
        lock.broadcast()
        return chosen
    }

    /// What the latest turns measured, by module.
    public var turnResults: [Int: TurnResult] {
        lock.lock()
        defer { lock.unlock() }
        return turnResultsSoFar
    }

    /// Whether a turn is still queued or under way.
    public var selfTesting: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !turnQueue.isEmpty || !turning.isEmpty
    }

    /// Caller holds the lock.
    func startTurn(_ m: Int, now: Int64) {
        let steps = geometry.stepsPerRevolution
        pending[m] = (1...steps).reversed().map { now + Int64($0) * stepInterval }
        releases[m] = now + Int64(steps + 1) * stepInterval
        turning[m] = (now, homes?[m].passes ?? 0, Int64(steps + 1) * stepInterval)
    }

    /// The turns of `released` modules are over: what they measured. Caller holds the lock.
    func finishTurns(_ released: [Int], now: Int64) {
        for m in released {
            guard let t = turning.removeValue(forKey: m) else { continue }
            let tracker = homes?[m]
            let passed = (tracker?.passes ?? 0) != t.passes
            turnResultsSoFar[m] = TurnResult(seconds: Double(now - t.began) / 1e9, plannedSeconds: Double(t.planned) / 1e9,
                                             magnetError: passed ? tracker?.errors.last : nil, hasSensor: tracker != nil, state: tracker?.state)
        }
    }
}
