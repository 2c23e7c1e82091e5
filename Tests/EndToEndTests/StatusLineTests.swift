import EndToEndSupport
import Foundation
import Testing
import TestWaits

/// `STATUS=` as `systemctl status flapd` shows it: always what each board shows or is moving
/// to, short enough for systemd to take (issue 13, bug 4). A real flapd, a notify socket here.
@Suite struct StatusLineTests {
    /// The STATUS= line of every message sent, in order (`waitUntil`'s condition gets the
    /// messages: it runs under the socket's lock, where `all` would wait for ever).
    func statuses(_ messages: [String]) -> [String] {
        messages.compactMap { m in m.split(separator: "\n").first { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst(7)) } }
    }

    /// Before, a restart of a settled board said `ready: local API on …` and never what it shows.
    @Test func aRestartSaysWhatTheSettledBoardShows() async throws {
        let dir = try scratchDirectory("flap-status")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for run in 0..<2 {
            let notify = try NotifySocket(directory: try scratchDirectory("flap-status-\(run)"))
            let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir],
                                         environment: ["NOTIFY_SOCKET": notify.path])
            let port = try #require(await flapd.apiPort())
            #expect(await notify.waitUntil { $0.contains { $0.hasPrefix("READY=1\n") } })
            if run == 0 {
                #expect(try await http("POST", port: port, body: Data(#"{"text":"HELLO"}"#.utf8)).status == 201)
                #expect(await notify.waitUntil { statuses($0).last == #"wall shows "HELLO""# }, "\(notify.all)")
                #expect(statuses(notify.all).contains(#"wall moving to "HELLO""#), "\(notify.all)")
            } else {
                let ready = notify.all.first { $0.hasPrefix("READY=1\n") }
                #expect(ready == "READY=1\nSTATUS=wall shows \"HELLO\"", "\(notify.all)")
            }
            flapd.terminate()
            #expect(await flapd.waitForExit() == 0)
        }
    }

    /// Before, a reload said `config reloaded` until the next settle.
    @Test func aReloadSaysWhatTheBoardShowsAndARefusalSaysSo() async throws {
        let dir = try scratchDirectory("flap-status")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let demo = try await NotifiedDemo(in: dir, config: "timing: { flip_ms: 60 }\n")
        let (flapd, notify, port, config) = (demo.flapd, demo.notify, demo.port, demo.config)
        #expect(try await http("POST", port: port, body: Data(#"{"text":"HI"}"#.utf8)).status == 201)
        #expect(await notify.waitUntil { statuses($0).last == #"wall shows "HI""# }, "\(notify.all)")
        try "timing: { flip_ms: 70 }\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(flapd.pid, SIGHUP)
        #expect(await notify.waitUntil { $0.filter { $0.hasPrefix("READY=1\n") }.count == 2 }, "\(notify.all)")
        #expect(notify.all.last { $0.hasPrefix("READY=1\n") } == "READY=1\nSTATUS=wall shows \"HI\"")
        try "timing: { flip_ms: 20 }\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(flapd.pid, SIGHUP)
        #expect(await notify.waitUntil { $0.filter { $0.hasPrefix("READY=1\n") }.count == 3 }, "\(notify.all)")
        #expect(notify.all.last { $0.hasPrefix("READY=1\n") } == "READY=1\nSTATUS=reload refused (\(config) has problems): wall shows \"HI\"")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }

    /// Before, a 40 × 128 board's line was 5257 bytes, and systemd ignores a notify datagram of
    /// 4096 bytes or more.
    @Test func aBigBoardsLineFitsOneShortDatagram() async throws {
        let dir = try scratchDirectory("flap-status")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let demo = try await NotifiedDemo(in: dir, config: "boards: [{ rows: 40, cols: 128 }]\ntiming: { flip_ms: 50, column_stagger_ms: 0, row_stagger_ms: 0 }\n")
        let (flapd, notify, port) = (demo.flapd, demo.notify, demo.port)
        let text = (0..<40).map { row in String(repeating: "ROW\(row) ", count: 16) }.joined(separator: "\n")
        let body = try JSONSerialization.data(withJSONObject: ["text": text])
        #expect(try await http("POST", port: port, body: body).status == 201)
        #expect(await notify.waitUntil { statuses($0).last?.hasPrefix("wall shows \"ROW0 ") == true }, "\(statuses(notify.all).map(\.utf8.count))")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
        for message in notify.all { #expect(message.utf8.count < 1024, "\(message.utf8.count) bytes: \(message.prefix(80))…") }
        #expect(statuses(notify.all).last?.hasSuffix("…\"") == false && statuses(notify.all).last?.hasSuffix("…") == true)
    }

    /// Before, a stop mid-transition named the half-way board as if it had settled.
    @Test func aStopMidTransitionSaysTheBoardIsPartWay() async throws {
        let dir = try scratchDirectory("flap-status")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = dir + "/trace.jsonl"
        let demo = try await NotifiedDemo(in: dir, config: "timing: { flip_ms: 200 }\n", arguments: ["--trace", trace])
        let (flapd, notify, port) = (demo.flapd, demo.notify, demo.port)
        // 'Z' is 26 flips from blank: five seconds of flips.
        #expect(try await http("POST", port: port, body: Data(#"{"text":"ZZZ"}"#.utf8)).status == 201)
        // The stop comes as the first flip is traced: at once, from the poll's own thread (a test
        // task resumed after a wait can wait seconds for a pool thread on a loaded machine).
        #expect(await offPool {
            let flipped = poll { ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "").contains("\n") }
            flapd.terminate()
            return flipped
        })
        #expect(await flapd.waitForExit() == 0)
        let after = statuses(Array(notify.all.drop { !$0.hasPrefix("STOPPING=1") }))
        // (A machine that starves flapd for the five seconds of flips stops a settled board:
        // then the stop says at once that it stopped.)
        #expect(after.first == #"stopping: wall moving to "ZZZ""# || after.first == #"stopping: wall shows "ZZZ""#
                || after.first == #"stopped: wall shows "ZZZ""#, "\(notify.all)")
        #expect(!after.contains { $0.contains("shows") && !$0.contains(#"shows "ZZZ""#) && !$0.contains("part-way") }, "\(notify.all)")
        let last = try #require(after.last)
        #expect(last.hasPrefix(#"stopped: wall part-way to "ZZZ" (shows "#) || last == #"stopped: wall shows "ZZZ""#, "\(notify.all)")
    }
}
