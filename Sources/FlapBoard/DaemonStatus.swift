import FlapCore
import FlapRelease
import FlapNet
import FlapSerial
import FlapSound
import FlapTerminal
import FlapClock
import FlapTiming
import Foundation

/// How the daemon is: what each board shows, module health, conductor lateness, the message
/// API, sound, uptime and versions — as JSON for `GET /status` and as Prometheus text for
/// `GET /metrics`.
public struct DaemonStatus: Sendable {
    public static let version = Release.version

    let wall: Wall
    let sound: ClackPlayer?
    let messages: (client: MessageAPIClient, mailroom: Mailroom)?
    let serial: SerialOutputs
    package let gpio: GPIOBoards
    let started: Int64
    let counter: FlipCounter?
    let mailroom: Mailroom?
    let schedule: ScheduleSpeaker?

    public init(wall: Wall, sound: ClackPlayer?, messages: (client: MessageAPIClient, mailroom: Mailroom)? = nil,
                serial: SerialOutputs = SerialOutputs(), gpio: GPIOBoards = GPIOBoards(), started: Int64 = MonotonicClock.now(),
                counter: FlipCounter? = nil, mailroom: Mailroom? = nil, schedule: ScheduleSpeaker? = nil) {
        self.schedule = schedule
        self.counter = counter
        self.mailroom = mailroom ?? messages?.mailroom
        self.serial = serial
        self.gpio = gpio
        self.wall = wall
        self.sound = sound
        self.messages = messages
        self.started = started
    }

    var messageAPI: StatusReport.MessageAPI {
        guard let (client, mailroom) = messages else { return StatusReport.MessageAPI(configured: false, connected: false) }
        let s = client.status, inbox = mailroom.inbox
        let fromAPI = inbox.live.values.filter { !$0.isOwn }.count
        return StatusReport.MessageAPI(configured: true, connected: s.connected, connections: s.connections, skippedFrames: s.skippedFrames,
                                       senders: fromAPI, held: inbox.held.count, lastProblem: s.lastProblem)
    }

    var uptime: Double { Double(MonotonicClock.now() - started) / 1e9 }

    /// How the daemon is now.
    public func report() -> StatusReport {
        let l = wall.conductor.lateness
        let sound = self.sound.map { player in
            let s = player.stats
            return StatusReport.Sound(clacks: s.clacks, late: s.late, dropped: s.dropped, underruns: s.underruns,
                                      remaps: s.remaps, openFailures: s.openFailures)
        }
        return StatusReport(
            boards: boards(),
            conductor: StatusReport.Conductor(flips: l.count, latenessP50Us: l.p50Micros, latenessP99Us: l.p99Micros,
                                              latenessMaxUs: l.maxMicros, early: l.early, latenessBins: wall.conductor.latenessBins),
            messageApi: messageAPI, sound: sound, uptimeS: (uptime * 10).rounded() / 10,
            versions: ["flapd": Self.version, "swift": Self.swiftVersion],
            quiet: mailroom?.quiet() ?? wall.config.quietHours.map { q in
                let now = Date().timeIntervalSince1970
                return StatusReport.Quiet(active: q.holds(at: now), until: q.holds(at: now) ? q.end(after: now) : nil, messages: q.messages)
            },
            waiting: mailroom?.waiting(), zones: mailroom?.zones(), schedule: schedule?.status(at: Date().timeIntervalSince1970),
            latenessBinsUs: LatenessHistogram.binEdgesMicros)
    }

    /// Every board as the report says it (what systemd's status line is read from).
    package func boards() -> [StatusReport.Board] {
        wall.config.boards.indices.map { i in
            let b = wall.config.boards[i]
            return StatusReport.Board(id: b.id, rows: b.rows, cols: b.cols, output: b.output,
                                      moving: wall.conductor.isMoving(board: i), shows: PlainFrame.rows(wall.conductor.frame(board: i), heart: b.heart),
                                      target: wall.target(board: i).codes, modules: modules(board: i), flips: counter?.counts(board: i))
        }
    }

    /// Module health: what GPIO home sensors, a splitflap display or flapbus controllers report
    /// (states named one way, `ModuleCondition`), and their link; else (virtual) all fine.
    func modules(board: Int) -> StatusReport.Modules {
        let b = wall.config.boards[board]
        var report = StatusReport.Modules(ok: b.rows * b.cols, faulty: 0, serial: serial.report(board: board), gpio: gpio.report(board: board))
        var reported: [StatusReport.Module] = []
        if let d = serial.splitflaps.first(where: { $0.board == board }) {
            reported = d.link.counters.modules.map {
                StatusReport.Module(state: ModuleCondition($0.state), flap: $0.flap, missedHome: $0.missedHome, unexpectedHome: $0.unexpectedHome)
            }
        }
        if let modules = gpio.health(board: board) {
            reported = modules.map {
                StatusReport.Module(state: ModuleCondition($0.state), missedHome: $0.missed, unexpectedHome: $0.unexpected, failures: $0.failures,
                                    magnetErrors: $0.magnetErrors)
            }
        }
        if let d = serial.flapbuses.first(where: { $0.board == board }) {
            reported = d.link.counters.reported.prefix(b.rows * b.cols).map {
                StatusReport.Module(state: ModuleCondition(flapbus: $0.state), flap: Int($0.flap), missedHome: Int($0.missedHome),
                                    unexpectedHome: Int($0.unexpectedHome), crcErrors: Int($0.crcErrors))
            }
        }
        if !reported.isEmpty {
            let faulty = reported.filter(\.state.isFaulty).count
            report.ok = reported.count - faulty
            report.faulty = faulty
            report.reported = reported
        }
        return report
    }

    public func prometheus() -> String { report().prometheus }

    static var swiftVersion: String {
        #if swift(>=6.3)
        "6.3"
        #elseif swift(>=6.2)
        "6.2"
        #else
        "6"
        #endif
    }
}
