@testable import FlapBoard
@testable import FlapConfig
import FlapCore
import Foundation
import Logging
import Testing
@testable import FlapDaemon

/// Issue 13, item 3: one Codable status model — `/status` writes it, `flapd status` reads it
/// back, `/metrics` renders it — built in-process from a wall.
@Suite struct StatusReportTests {
    @Test func theReportOfAWallSaysWhatItShowsAndReadsBackWhole() async throws {
        let config = try ConfigLoader.parse("boards: [{ id: hall, rows: 3, cols: 15 }, { id: kitchen }]")
        let wall = Wall(config: config, drivers: [], logger: Logger(label: "test"))
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: Logger(label: "test")) { _, _ in }
        _ = await mailroom.post("HELLO", type: .text)
        let report = DaemonStatus(wall: wall, sound: nil).report()
        #expect(report.boards.map(\.id) == ["hall", "kitchen"])
        #expect(report.boards[0].target.count == 3 && report.boards[0].target[1].contains(8), "HELLO on the local API's board (the first)")
        #expect(report.boards[0].modules == StatusReport.Modules(ok: 45, faulty: 0))
        #expect(report.messageApi == StatusReport.MessageAPI(configured: false, connected: false))

        let json = try report.json()
        #expect(try StatusReport.decode(json) == report)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(Set(object.keys) == ["boards", "conductor", "message_api", "uptime_s", "versions", "lateness_bins_us"], "no sound: left out")
        let conductor = try #require(object["conductor"] as? [String: Any])
        #expect(Set(conductor.keys) == ["flips", "lateness_p50_us", "lateness_p99_us", "lateness_max_us", "early", "lateness_bins"])
        let modules = try #require((object["boards"] as? [[String: Any]])?.first?["modules"] as? [String: Int])
        #expect(modules == ["ok": 45, "faulty": 0], "absent values are left out, not null")
    }

    @Test func metricsAreTheSameReportAsPrometheusText() {
        var report = StatusReport(
            boards: [StatusReport.Board(id: "wall", rows: 1, cols: 2, output: .virtual, moving: true, shows: ["AB"], target: [[1, 2]],
                                        modules: StatusReport.Modules(ok: 1, faulty: 1))],
            conductor: StatusReport.Conductor(flips: 7, latenessP50Us: 10, latenessP99Us: 20, latenessMaxUs: 30, early: 0),
            messageApi: StatusReport.MessageAPI(configured: true, connected: true, skippedFrames: 3), sound: nil, uptimeS: 1.5,
            versions: ["flapd": "9.9"])
        var text = report.prometheus
        // Counters as whole numbers, gauges as swift-prometheus writes a Double.
        for line in ["flapd_flips_total 7", "flapd_lateness_microseconds{quantile=\"0.99\"} 20.0", "flapd_board_moving{board=\"wall\"} 1.0",
                     "flapd_board_faulty_modules{board=\"wall\"} 1.0", "flapd_message_api_connected 1.0",
                     "flapd_message_api_skipped_frames_total 3", "flapd_uptime_seconds 1.5", "flapd_build_info{version=\"9.9\"} 1.0",
                     "# TYPE flapd_flips_total counter", "# TYPE flapd_board_moving gauge", "# HELP flapd_flips_total Flips fired by the conductor."] {
            #expect(text.contains(line + "\n"), "\(line) in \(text)")
        }
        #expect(!text.contains("flapd_lateness_bins_total"), "no bins in the report: none written")
        report.conductor.latenessBins = [5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]
        report.latenessBinsUs = [10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000]
        text = report.prometheus
        #expect(text.contains("flapd_lateness_bins_total{below_us=\"10\"} 5\n") && text.contains("flapd_lateness_bins_total{below_us=\"20000\"} 5\n")
                && text.contains("flapd_lateness_bins_total{below_us=\"inf\"} 7\n"), "cumulative: \(text)")
        #expect(!text.contains("flapd_sound"))
        report.sound = StatusReport.Sound(clacks: 4, late: 0, dropped: 0, underruns: 2, remaps: 0, openFailures: 0)
        text = report.prometheus
        #expect(text.contains("flapd_sound_clacks_total 4\n") && text.contains("flapd_sound_underruns_total 2\n"))
    }

    /// Issue 35, item 3: each module's magnet errors — the last, the worst of the latest passes
    /// (sign kept), the history — in `/status`, and the last and worst in `/metrics`.
    @Test func magnetErrorsAreReportedPerModule() throws {
        let slipping = StatusReport.Module(state: .normal, missedHome: 0, unexpectedHome: 0, failures: 0, magnetErrors: [0, 2, -3, 1])
        #expect(slipping.magnetError == 1 && slipping.worstMagnetError == -3)
        let quiet = StatusReport.Module(state: .homing, magnetErrors: [])
        #expect(quiet.magnetError == nil && quiet.worstMagnetError == nil)
        var modules = StatusReport.Modules(ok: 2, faulty: 0)
        modules.reported = [quiet, slipping]
        let report = StatusReport(
            boards: [StatusReport.Board(id: "wall", rows: 1, cols: 2, output: .gpio, moving: false, shows: ["AB"], target: [[1, 2]], modules: modules)],
            conductor: StatusReport.Conductor(flips: 0, latenessP50Us: 0, latenessP99Us: 0, latenessMaxUs: 0, early: 0),
            messageApi: StatusReport.MessageAPI(configured: false, connected: false), sound: nil, uptimeS: 1, versions: [:])
        let object = try #require(try JSONSerialization.jsonObject(with: try report.json()) as? [String: Any])
        let reported = try #require(((object["boards"] as? [[String: Any]])?.first?["modules"] as? [String: Any])?["reported"] as? [[String: Any]])
        #expect(reported[1]["magnet_error"] as? Int == 1 && reported[1]["worst_magnet_error"] as? Int == -3
                && reported[1]["magnet_errors"] as? [Int] == [0, 2, -3, 1], "\(reported)")
        #expect(try StatusReport.decode(try report.json()) == report)
        let text = report.prometheus
        #expect(text.contains("flapd_module_magnet_error_steps{board=\"wall\",row=\"0\",col=\"1\"} 1.0\n")
                && text.contains("flapd_module_magnet_error_worst_steps{board=\"wall\",row=\"0\",col=\"1\"} -3.0\n"), "\(text)")
        #expect(!text.contains("col=\"0\"} "), "a module with no pass yet has no error")
    }
}

/// Issue 13, item 3 and bug 4: systemd's `STATUS=` is read from the same model — each board's
/// `moving`, `shows` and `target` — so it always says what the board shows or is moving to.
@Suite struct StatusLineModelTests {
    func board(_ id: String, moving: Bool, shows: String, target: String) -> StatusReport.Board {
        let codes = [Array(target.unicodeScalars.map { Int(Glyph(character: Character($0))?.code ?? 0) })]
        return StatusReport.Board(id: id, rows: 1, cols: target.count, output: .virtual, moving: moving, shows: [shows], target: codes,
                                  modules: StatusReport.Modules(ok: target.count, faulty: 0))
    }

    @Test func eachBoardShowsMovesOrAtAStopIsPartWay() {
        let boards = [board("hall", moving: false, shows: "HI", target: "HI"), board("den", moving: true, shows: "AB", target: "CD")]
        #expect(StatusReporter.line(boards, stopping: false, note: nil) == #"hall shows "HI"; den moving to "CD""#)
        #expect(StatusReporter.line(boards, stopping: true, note: nil) == #"stopping: hall shows "HI"; den moving to "CD""#)
        // Still, short of its target: about to move — or, once stopping, left part-way.
        let still = [board("den", moving: false, shows: "AB", target: "CD")]
        #expect(StatusReporter.line(still, stopping: false, note: nil) == #"den moving to "CD""#)
        #expect(StatusReporter.line(still, stopping: true, note: "reload refused (x has problems)")
                == #"reload refused (x has problems): stopped: den part-way to "CD" (shows "AB")"#)
    }

    @Test func theReportOfAWallIsWhatTheLineSays() async throws {
        let config = try ConfigLoader.parse("boards: [{ id: wall }]")
        let wall = Wall(config: config, drivers: [], logger: Logger(label: "test"))
        let mailroom = Mailroom(wall: wall, zones: config.routedZones, store: nil, logger: Logger(label: "test")) { _, _ in }
        let status = DaemonStatus(wall: wall, sound: nil)
        #expect(StatusReporter.line(status.report().boards, stopping: false, note: nil) == "wall shows a blank board")
        _ = await mailroom.post("HELLO", type: .text)
        #expect(StatusReporter.line(status.report().boards, stopping: false, note: nil) == #"wall moving to "HELLO""#)
    }

    @Test func aBigBoardsLineStaysUnderAKilobyte() {
        let text = String(repeating: "ROW ", count: 80)
        let boards = (0..<4).map { board("b\($0)", moving: $0 % 2 == 0, shows: text, target: String(text.reversed())) }
        let line = StatusReporter.line(boards, stopping: false, note: nil)
        #expect(line.utf8.count <= StatusReporter.maxBytes && line.contains("…"), "\(line.utf8.count) bytes: \(line)")
        #expect((0..<4).allSatisfy { line.contains("b\($0) moving to \"") }, "every board is named: \(line)")
    }
}
