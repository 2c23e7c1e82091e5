import FlapCore
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
    public static let version = "0.1.0"

    let wall: Wall
    let sound: ClackPlayer?
    let messages: (client: MessageAPIClient, mailroom: Mailroom)?
    let serial: SerialOutputs
    let gpio: GPIOBoards
    let started: Int64

    public init(wall: Wall, sound: ClackPlayer?, messages: (client: MessageAPIClient, mailroom: Mailroom)? = nil,
                serial: SerialOutputs = SerialOutputs(), gpio: GPIOBoards = GPIOBoards(), started: Int64 = MonotonicClock.now()) {
        self.serial = serial
        self.gpio = gpio
        self.wall = wall
        self.sound = sound
        self.messages = messages
        self.started = started
    }

    var messageAPI: [String: Any] {
        guard let (client, mailroom) = messages else { return ["configured": false, "connected": false] }
        let s = client.status, inbox = mailroom.inbox
        var report: [String: Any] = ["configured": true, "connected": s.connected, "connections": s.connections,
                                     "skipped_frames": s.skippedFrames, "senders": inbox.live.count, "held": inbox.held.count]
        if let p = s.lastProblem { report["last_problem"] = p }
        return report
    }

    var uptime: Double { Double(MonotonicClock.now() - started) / 1e9 }

    public func json() -> [String: Any] {
        let l = wall.conductor.lateness
        var report: [String: Any] = [
            "boards": wall.config.boards.indices.map { i -> [String: Any] in
                let b = wall.config.boards[i]
                let frame = wall.conductor.frame(board: i)
                return ["id": b.id, "rows": b.rows, "cols": b.cols, "output": b.output.rawValue,
                        "moving": wall.conductor.isMoving(board: i),
                        "shows": PlainFrame.rows(frame),
                        "target": wall.target(board: i).codes,
                        "modules": modules(board: i)] as [String: Any]
            },
            "conductor": ["flips": l.count, "lateness_p50_us": l.p50Micros, "lateness_p99_us": l.p99Micros,
                          "lateness_max_us": l.maxMicros, "early": l.early],
            "message_api": messageAPI,
            "uptime_s": (uptime * 10).rounded() / 10,
            "versions": ["flapd": Self.version, "swift": Self.swiftVersion],
        ]
        if let s = sound?.stats {
            report["sound"] = ["clacks": s.clacks, "late": s.late, "dropped": s.dropped, "underruns": s.underruns,
                               "remaps": s.remaps, "open_failures": s.openFailures]
        }
        return report
    }

    /// Module health: what GPIO home sensors, a splitflap display or flapbus controllers report
    /// (states named one way, `ModuleCondition`), and their link; else (virtual) all fine.
    func modules(board: Int) -> [String: Any] {
        let b = wall.config.boards[board]
        var report: [String: Any] = ["ok": b.rows * b.cols, "faulty": 0]
        if let link = serial.report(board: board) { report["serial"] = link }
        if let lines = gpio.report(board: board) { report["gpio"] = lines }
        var reported: [(ModuleCondition, [String: Any])] = []
        if let d = serial.splitflaps.first(where: { $0.board == board }) {
            reported = d.link.counters.modules.map {
                (ModuleCondition($0.state), ["flap": $0.flap, "missed_home": $0.missedHome, "unexpected_home": $0.unexpectedHome])
            }
        }
        if let modules = gpio.health(board: board) {
            reported = modules.map {
                (ModuleCondition($0.state), ["missed_home": $0.missed, "unexpected_home": $0.unexpected, "failures": $0.failures])
            }
        }
        if let d = serial.flapbuses.first(where: { $0.board == board }) {
            reported = d.link.counters.reported.prefix(b.rows * b.cols).map {
                (ModuleCondition(flapbus: $0.state), ["flap": $0.flap, "missed_home": $0.missedHome, "unexpected_home": $0.unexpectedHome,
                                                      "crc_errors": $0.crcErrors])
            }
        }
        if !reported.isEmpty {
            let faulty = reported.filter { $0.0.isFaulty }.count
            report["ok"] = reported.count - faulty
            report["faulty"] = faulty
            report["reported"] = reported.map { condition, fields in fields.merging(["state": condition.rawValue]) { a, _ in a } }
        }
        return report
    }

    public func prometheus() -> String {
        let l = wall.conductor.lateness
        var lines = [
            "# HELP flapd_flips_total Flips fired by the conductor.", "# TYPE flapd_flips_total counter",
            "flapd_flips_total \(l.count)",
            "# HELP flapd_lateness_microseconds Lateness of fired flips (actual - planned).",
            "# TYPE flapd_lateness_microseconds summary",
            "flapd_lateness_microseconds{quantile=\"0.5\"} \(l.p50Micros)",
            "flapd_lateness_microseconds{quantile=\"0.99\"} \(l.p99Micros)",
            "flapd_lateness_microseconds{quantile=\"1\"} \(l.maxMicros)",
            "# HELP flapd_board_moving Whether a board is in a transition.", "# TYPE flapd_board_moving gauge",
        ]
        for (i, b) in wall.config.boards.enumerated() {
            lines.append("flapd_board_moving{board=\"\(b.id)\"} \(wall.conductor.isMoving(board: i) ? 1 : 0)")
        }
        lines += ["# HELP flapd_message_api_connected Whether the message API is connected.",
                  "# TYPE flapd_message_api_connected gauge", "flapd_message_api_connected \(messages?.client.status.connected == true ? 1 : 0)",
                  "# TYPE flapd_message_api_skipped_frames_total counter",
                  "flapd_message_api_skipped_frames_total \(messages?.client.status.skippedFrames ?? 0)"]
        if let s = sound?.stats {
            lines += ["# TYPE flapd_sound_clacks_total counter", "flapd_sound_clacks_total \(s.clacks)",
                      "# TYPE flapd_sound_underruns_total counter", "flapd_sound_underruns_total \(s.underruns)"]
        }
        lines += ["# TYPE flapd_uptime_seconds gauge", "flapd_uptime_seconds \(String(format: "%.1f", uptime))",
                  "# TYPE flapd_build_info gauge", "flapd_build_info{version=\"\(Self.version)\"} 1"]
        return lines.joined(separator: "\n") + "\n"
    }

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
