import FlapClock
import FlapConfig
import Logging
import Synchronization

/// Live calibration (issue 35): one session at a time, opened by the maker (the page, the local
/// API, `flapd calibrate start`), in which the wall is theirs — the mailroom holds every message
/// that arrives (saved as ever, shown once the session ends) — and one module at a time is turned
/// on by a step or a flap and marked with the flap it shows (`GPIOBoards.calibrate`). The session
/// ends when the maker says so, or by itself after `idleSeconds` without a request
/// (`endIfIdle`, which `run` calls). Nothing of it is kept across a restart but the offsets
/// already saved: a stop, a kill or a power cut ends it, and the held messages show at the start.
public final class CalibrationSession: Sendable {
    /// How long a session lasts without a request, by default (`local_api.calibration_idle_seconds`).
    public static let defaultIdleSeconds = 300

    /// The session as the API answers it.
    public struct Status: Codable, Sendable, Equatable {
        public var active: Bool
        public var idleSeconds: Int
        /// Seconds left before the session ends by itself (while active).
        public var endsInS: Int?
        /// The boards with stepper modules on GPIO, which it can turn.
        public var boards: [String]

        enum CodingKeys: String, CodingKey {
            case active, boards
            case idleSeconds = "idle_seconds", endsInS = "ends_in_s"
        }
    }

    let wall: Wall
    let gpio: GPIOBoards
    let mailroom: Mailroom
    let logger: Logger
    let idleSeconds: Int
    /// Whether a session is open, and the monotonic instant of its last request.
    private let state = Mutex<(active: Bool, lastUse: Int64)>((false, 0))

    package init(wall: Wall, gpio: GPIOBoards, mailroom: Mailroom, idleSeconds: Int = defaultIdleSeconds, logger: Logger) {
        self.wall = wall; self.gpio = gpio; self.mailroom = mailroom
        self.idleSeconds = idleSeconds; self.logger = logger
    }

    public var status: Status {
        let (active, last) = state.withLock { ($0.active, $0.lastUse) }
        let left = Int64(idleSeconds) - (MonotonicClock.now() - last) / 1_000_000_000
        return Status(active: active, idleSeconds: idleSeconds, endsInS: active ? max(0, Int(left)) : nil,
                      boards: gpio.drivers.map { wall.config.boards[$0.board].id })
    }

    /// Opens a session (or keeps the open one alive): the wall is held from now on.
    public func begin() async -> Status {
        let opened = state.withLock { s in
            defer { s = (true, MonotonicClock.now()) }
            return !s.active
        }
        if opened {
            logger.notice("calibration started", metadata: ["idle_seconds": "\(idleSeconds)"])
            await mailroom.setCalibrating(true)
        }
        return status
    }

    /// Ends the session: the boards show what came meanwhile.
    public func end() async -> Status {
        let closed = state.withLock { s in
            defer { s.active = false }
            return s.active
        }
        if closed { await mailroom.setCalibrating(false) }
        return status
    }

    /// One request on one module (a board by its id; row and column from 0), answered once the
    /// module has landed. Refused unless a session is open; each request keeps it alive.
    public func act(board id: String, row: Int, col: Int, _ action: CalibrationAction) async throws(CalibrationProblem) -> CalibratedModule {
        guard let board = wall.config.boards.firstIndex(where: { $0.id == id }) else {
            throw CalibrationProblem("no board '\(id)' (boards: \(wall.config.boards.map(\.id).joined(separator: ", ")))", status: 400)
        }
        let open = state.withLock { s in
            if s.active { s.lastUse = MonotonicClock.now() }
            return s.active
        }
        guard open else { throw CalibrationProblem("calibration is not on: start it first ({\"action\": \"start\"})") }
        let (gpio, conductor, config) = (gpio, wall.conductor, wall.config.boards[board])
        // Saving an offset writes a file, and the answer waits for the module to land (a turn at
        // most, at the homing pace): on a thread of its own, off the caller's executor. Once answered, what the board is
        // told next starts from where the module stands.
        return try await onThread(named: "calibration") {
            Result { () throws(CalibrationProblem) in
                let module = try gpio.calibrate(board: board, config, row: row, col: col, action, conductor: conductor)
                let m = row * config.cols + col, deadline = MonotonicClock.now() + 60_000_000_000
                while !conductor.turnOver(board: board, module: m), MonotonicClock.now() < deadline {
                    MonotonicClock.sleep(until: MonotonicClock.now() + 2_000_000)
                }
                return module
            }
        }.get()
    }

    /// Ends an open session that has had no request for `idleSeconds`; says whether it did.
    @discardableResult
    public func endIfIdle(now: Int64 = MonotonicClock.now()) async -> Bool {
        let idle = state.withLock { s in
            guard s.active, now - s.lastUse >= Int64(idleSeconds) * 1_000_000_000 else { return false }
            s.active = false
            return true
        }
        guard idle else { return false }
        logger.notice("calibration ended by itself after \(idleSeconds) s without a request")
        await mailroom.setCalibrating(false)
        return true
    }
}
