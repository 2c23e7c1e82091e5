import FlapInput
import FlapConfig
import FlapMessages
import Foundation

/// How the daemon is, as one Codable value: what `GET /status` sends (snake_case JSON), what
/// `GET /metrics` renders as Prometheus text, what `flapd status` reads back, and — its
/// `boards` — what systemd's one-line `STATUS=` says (`StatusReporter.line`).
public struct StatusReport: Codable, Sendable, Equatable {
    public var boards: [Board]
    public var conductor: Conductor
    /// `messageApi`, not `messageAPI`: the name the snake_case key `message_api` reads back to.
    public var messageApi: MessageAPI
    public var sound: Sound?
    public var uptimeS: Double
    public var versions: [String: String]
    /// Quiet hours for motion, and the messages waiting (for their unlock, or for the hours' end).
    public var quiet: Quiet?
    public var waiting: [Waiting]?
    /// What each zone shows, and who sent it.
    public var zones: [ZoneShows]?
    /// The schedule's entries (`schedule:`); nil when there is none.
    public var schedule: [ScheduleEntryStatus]?
    /// The upper edges (µs, exclusive) of the lateness bins; the last bin takes the rest.
    public var latenessBinsUs: [Int]?

    /// One zone: its board (or grid) and rectangle, and the message it shows — whose, and until
    /// when if it is temporary. No message: the zone draws nothing.
    public struct ZoneShows: Codable, Sendable, Equatable {
        public var board: String
        public var rows: [Int]
        public var cols: [Int]
        public var id: String?
        public var sender: String?
        public var until: Double?
    }

    /// Quiet hours: whether they hold now, until when (seconds since 1970), and what they do.
    /// A schedule entry: when it speaks next (nil: never again), when it last spoke since flapd
    /// started (seconds since 1970).
    public struct ScheduleEntryStatus: Codable, Sendable, Equatable {
        public var id: String
        public var sender: String
        public var next: Double?
        public var last: Double?
        public var priority: InboxMessage.Priority
        public var forSeconds: Double?
        /// The sources its text reads.
        public var sources: [SourceStatus]?
        /// When a source it reads was stale at its last time: that time (it said nothing).
        public var skipped: Double?
    }

    /// A source of the schedule: when its last good value came and how old it is, whether that
    /// is stale, what went wrong last (nil once a fetch succeeds), when it is fetched next.
    public struct SourceStatus: Codable, Sendable, Equatable {
        public var id: String
        public var fetched: Double?
        public var ageS: Double?
        public var stale: Bool
        public var lastError: String?
        public var nextFetch: Double?
    }

    public struct Quiet: Codable, Sendable, Equatable {
        public var active: Bool
        public var until: Double?
        /// `hold` or `gentle`.
        public var messages: QuietHours.Messages
        /// Switched on or off by hand (`POST /quiet`); nil: the configured hours decide.
        public var switched: Bool?
    }

    /// A message that is not on the board yet: who sent it, and why it waits (`unlock` — a held
    /// letter — or `quiet hours`) until when.
    public struct Waiting: Codable, Sendable, Equatable {
        public var id: String
        public var sender: String
        public var reason: WaitReason
        public var until: Double?
    }

    /// Why a message waits: a held letter not yet unlocked, quiet hours, or a calibration session.
    public enum WaitReason: String, Codable, Sendable {
        case unlock
        case quietHours = "quiet hours"
        case calibration
    }

    /// One board: its size and output, whether it moves, what it shows (rows of text), where it
    /// is going (rows of codes), and its modules' health.
    public struct Board: Codable, Sendable, Equatable {
        public var id: String
        public var rows: Int
        public var cols: Int
        public var output: OutputKind
        public var moving: Bool
        public var shows: [String]
        public var target: [[Int]]
        public var modules: Modules
        /// Flips each module has made, row by row (since the state folder was made, or this start).
        public var flips: [[Int]]?
    }

    /// Module health: counts, and what a bus or the home sensors report of each module.
    public struct Modules: Codable, Sendable, Equatable {
        public var ok: Int
        public var faulty: Int
        public var serial: SerialLink?
        public var gpio: GPIOLines?
        public var reported: [Module]?
    }

    /// The link to a serial display or controller.
    public struct SerialLink: Codable, Sendable, Equatable {
        public var `protocol`: String
        public var connected: Bool
        /// Frames (splitflap, flapbus) or messages (krone, omega) sent.
        public var sent: Int
        public var disconnects: Int
        public var resyncs: Int
        /// splitflap and flapbus: answers and what went wrong with them.
        public var retries: Int?
        public var acks: Int?
        public var crcErrors: Int?
        public var malformed: Int?
        /// krone and omega: bytes sent, and how late the latest message left (ms).
        public var bytes: Int?
        public var maxLateMs: Double?
        /// splitflap: acknowledged targets the display's state later contradicted.
        public var disagreements: Int?
        /// flapbus: frames the controller refused; the modules and kind it reports; STATUS replies.
        public var refused: Int?
        public var controllerModules: Int?
        public var controllerKind: ControllerKind?
        public var statusReports: Int?
    }

    /// What a flapbus controller says it drives (`unknown` before it said).
    public enum ControllerKind: String, Codable, Sendable { case led, stepper, unknown }

    /// A GPIO board's lines: steppers (`steps` … `max_late_us`) or an LED chain (`frames`).
    public struct GPIOLines: Codable, Sendable, Equatable {
        public var libgpiod: String
        public var chip: String?
        public var steps: Int?
        public var writes: Int?
        public var writeFailures: Int?
        public var maxLateUs: Int?
        public var frames: Int?
        /// Step edges per lateness bin (edges in `StatusReport.latenessBinsUs`).
        public var stepLatenessBins: [Int]?
    }

    /// What is reported of one module (`state` one of `ModuleCondition`).
    public struct Module: Codable, Sendable, Equatable {
        public var state: ModuleCondition
        public var flap: Int?
        public var missedHome: Int?
        public var unexpectedHome: Int?
        public var crcErrors: Int?
        public var failures: Int?
        /// GPIO home sensors (issue 35): how far from where it was due the module met its magnet
        /// at its last pass, in steps (positive: late — the drum slipped; negative: early); the
        /// largest of its latest passes (`magnetErrors`, oldest first, at most 32), sign kept.
        public var magnetError: Int?
        public var worstMagnetError: Int?
        public var magnetErrors: [Int]?

        public init(state: ModuleCondition, flap: Int? = nil, missedHome: Int? = nil, unexpectedHome: Int? = nil,
                    crcErrors: Int? = nil, failures: Int? = nil, magnetErrors: [Int]? = nil) {
            self.state = state; self.flap = flap; self.missedHome = missedHome; self.unexpectedHome = unexpectedHome
            self.crcErrors = crcErrors; self.failures = failures
            self.magnetErrors = magnetErrors
            magnetError = magnetErrors?.last
            worstMagnetError = magnetErrors?.max { abs($0) < abs($1) }
        }
    }

    public struct Conductor: Codable, Sendable, Equatable {
        public var flips: Int
        public var latenessP50Us: Int
        public var latenessP99Us: Int
        public var latenessMaxUs: Int
        public var early: Int
        /// Fired flips per lateness bin (edges in `StatusReport.latenessBinsUs`).
        public var latenessBins: [Int]?
    }

    public struct MessageAPI: Codable, Sendable, Equatable {
        public var configured: Bool
        public var connected: Bool
        public var connections: Int?
        public var skippedFrames: Int?
        /// Senders with a live message, and letters held for later.
        public var senders: Int?
        public var held: Int?
        public var lastProblem: String?
    }

    public struct Sound: Codable, Sendable, Equatable {
        public var clacks: Int
        public var late: Int
        public var dropped: Int
        public var underruns: Int
        public var remaps: Int
        public var openFailures: Int
    }

    /// The JSON of `GET /status`: snake_case keys, sorted, absent values left out.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    /// What an answer of `/status` may hold: room for a 40 × 128 board's codes and module
    /// reports, and nesting no status needs (a board's reported module is depth 6).
    public static let limits = JSONLimits(maxBytes: 8 << 20, maxDepth: 8, maxValues: 400_000)

    /// Reads what `json()` wrote — an answer from whatever listens on the port, so checked as
    /// strict JSON within `limits` before the decoder sees it.
    public static func decode(_ data: Data) throws -> StatusReport {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(StatusReport.self, from: data, checkedWithin: limits)
    }
}
