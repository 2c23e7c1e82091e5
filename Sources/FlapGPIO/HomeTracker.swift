/// One module's home sensor, checked against its steps: a drum passes its magnet once a turn,
/// so after homing the sensor must fire every `stepsPerRevolution` steps, give or take a quarter
/// flap. A pulse that does not come (missed) or comes elsewhere (unexpected) is a failure; the
/// driver re-homes the module, and after `maxFailures` marks it faulty and leaves it still.
public struct HomeTracker: Sendable, Equatable {
    public enum State: String, Sendable { case unhomed, homing, normal, faulty }
    public enum Event: Equatable, Sendable { case homed, missed, unexpected, notFound }

    public let stepsPerRevolution: Int
    /// A quarter flap, in steps: how far from where it should be a pulse may come.
    public let window: Int
    public let maxFailures: Int
    public private(set) var state = State.unhomed
    /// Steps since the sensor's last good pulse (0: at the magnet).
    public private(set) var count = 0
    public private(set) var missed = 0
    public private(set) var unexpected = 0
    public private(set) var failures = 0
    /// Steps taken in the homing turn so far.
    private var searched = 0

    public init(stepsPerRevolution: Int, flaps: Int, maxFailures: Int) {
        self.stepsPerRevolution = stepsPerRevolution
        window = max(1, stepsPerRevolution / flaps / 4)
        self.maxFailures = maxFailures
    }

    /// Starts a homing turn: the module steps forward until the sensor fires.
    public mutating func startHoming() {
        guard state != .faulty else { return }
        state = .homing
        searched = 0
    }

    /// The module took a step. A homing module that has gone round one and a half turns
    /// without a pulse has no working sensor (`notFound`); a homed one that passed its magnet
    /// by more than the window without a pulse `missed` it.
    public mutating func stepped() -> Event? {
        switch state {
        case .homing:
            searched += 1
            guard searched > stepsPerRevolution * 3 / 2 else { return nil }
            return fail(.notFound)
        case .normal:
            count += 1
            guard count > stepsPerRevolution + window else { return nil }
            missed += 1
            return fail(.missed)
        case .unhomed, .faulty:
            return nil
        }
    }

    /// The sensor fired (its active edge).
    public mutating func pulse() -> Event? {
        switch state {
        case .homing:
            state = .normal
            count = 0
            return .homed
        case .normal:
            let d = count % stepsPerRevolution
            let distance = min(d, stepsPerRevolution - d)
            guard distance <= window else {
                unexpected += 1
                return fail(.unexpected)
            }
            count = 0  // the magnet is the reference: a skipped step or two is made good here
            return nil
        case .unhomed, .faulty:
            return nil
        }
    }

    /// Counts a failure; faulty after `maxFailures`, else the module needs homing again.
    private mutating func fail(_ event: Event) -> Event {
        failures += 1
        state = failures >= maxFailures ? .faulty : .unhomed
        return event
    }
}
