/// One module's home sensor, checked against its steps: a drum passes its magnet once a turn,
/// so after homing the sensor must fire every `stepsPerRevolution` steps, give or take a quarter
/// flap. A pulse that does not come (missed) or comes elsewhere (unexpected) is a failure; the
/// driver re-homes the module, and after `maxFailures` marks it faulty and leaves it still.
///
/// A sensor's edge may be read late (the reader thread is busy, the machine loaded) while the
/// module steps on: each step's instant is kept, and a pulse is placed by the edge's own
/// timestamp, so the steps taken after it count as past the magnet; and a pulse is called missed
/// only once the reader has read every edge up to the step where it was due (`read(upTo:)`).
///
/// Every pass of a homed module by its magnet is measured (issue 35): the error, in steps, between
/// where the magnet was due — a turn after the last pass — and where it was seen. A pass within
/// the window is `passed(error:)`, which the driver makes good at once (the drum slipped: it turns
/// on by the error); one outside it is `unexpected`, and the module is homed again. The latest
/// errors are kept for diagnostics (`errors`).
public struct HomeTracker: Sendable, Equatable {
    public enum State: String, Sendable { case unhomed, homing, normal, faulty }
    public enum Event: Equatable, Sendable { case homed, passed(error: Int), missed, unexpected, notFound }
    /// How many passes' errors are kept.
    public static let historyLength = 32

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
    /// The errors of the latest passes by the magnet, oldest first (at most `historyLength`): in
    /// steps, positive when the magnet came late — the drum fell behind its steps (it slipped) —
    /// negative when it came early.
    public private(set) var errors: [Int] = []
    /// How many passes were measured since flapd started.
    public private(set) var passes = 0
    /// Steps taken in the homing turn so far.
    private var searched = 0
    /// The instants of the latest steps (a ring, `next` is the oldest once it is full).
    private var recent: [Int64] = []
    private var next = 0
    /// The instant of the step past which the pulse is overdue, until it comes or is missed.
    private var overdue: Int64?

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
        overdue = nil
    }

    /// The module took a step at `instant`. A homing module that has gone round one and a half
    /// turns without a pulse has no working sensor (`notFound`); a homed one that passed its
    /// magnet by more than the window has its pulse overdue (see `read(upTo:)`).
    public mutating func stepped(at instant: Int64 = 0) -> Event? {
        if recent.count < max(16, stepsPerRevolution / 2) { recent.append(instant) } else {
            recent[next] = instant
            next = (next + 1) % recent.count
        }
        switch state {
        case .homing:
            searched += 1
            guard searched > stepsPerRevolution * 3 / 2 else { return nil }
            return fail(.notFound)
        case .normal:
            count += 1
            if count > stepsPerRevolution + window, overdue == nil { overdue = instant }
            return nil
        case .unhomed, .faulty:
            return nil
        }
    }

    /// The sensor's reader has read every edge that happened up to `instant`: an overdue pulse
    /// that has not come by then was `missed`.
    public mutating func read(upTo instant: Int64) -> Event? {
        guard state == .normal, let due = overdue, instant >= due else { return nil }
        missed += 1
        return fail(.missed)
    }

    /// The sensor fired (its active edge) at `instant`, or just now: after `.homed`, `count`
    /// is how many steps the module has already taken past its magnet.
    public mutating func pulse(at instant: Int64? = nil) -> Event? {
        let late = instant.map { i in recent.count(where: { $0 > i }) } ?? 0
        switch state {
        case .homing:
            state = .normal
            count = late
            return .homed
        case .normal:
            // Steps from the last pass to this one, against a whole turn: the signed error.
            let d = max(0, count - late) % stepsPerRevolution
            let error = d > stepsPerRevolution / 2 ? d - stepsPerRevolution : d
            errors.append(error)
            passes += 1
            if errors.count > Self.historyLength { errors.removeFirst() }
            guard abs(error) <= window else {
                unexpected += 1
                return fail(.unexpected)
            }
            count = late  // the magnet is the reference from here on
            overdue = nil
            return .passed(error: error)
        case .unhomed, .faulty:
            return nil
        }
    }

    /// Counts a failure; faulty after `maxFailures`, else the module needs homing again.
    private mutating func fail(_ event: Event) -> Event {
        failures += 1
        overdue = nil
        state = failures >= maxFailures ? .faulty : .unhomed
        return event
    }
}
