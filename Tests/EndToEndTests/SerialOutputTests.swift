import FlapSerialTesting
import EndToEndSupport
import Foundation
import Testing
import TestWaits

/// flapd driving an open splitflap display on a serial device (a pseudo-terminal here, through
/// the termios transport, since libserialport refuses ptys): each module's target is sent at
/// its cascade instant, as `flapd plan` says, and the display's answers are honoured.
@Suite struct SerialOutputTests {
    @Test func eachModulesTargetGoesOutAtItsCascadeInstant() async throws {
        // The display leaves the first two frames unanswered once each: the retries go out.
        let display = try ScriptedDisplay(device: [.ack, .drop, .ack, .corruptAck])
        defer { display.stop() }
        let config = try configFile("""
            local_api: { port: 0 }
            sound: { enabled: false }
            boards:
              - id: station
                rows: 1
                cols: 4
                output: splitflap
                serial: { port: \(display.devicePath!), baud: 230400, retry_ms: 40 }
                timing: { flip_ms: 50, column_stagger_ms: 150, row_stagger_ms: 0 }
            """)

        let plan = try FlapdProcess(["plan", "--to", "ABCD", "--config", config])
        #expect(await plan.waitForExit() == 0, "\(plan.stderr)")
        let modules = try #require((try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["modules"] as? [[String: Any]])
        let order = modules.sorted { ($0["start_ms"] as! Double) < ($1["start_ms"] as! Double) }.map { $0["col"] as! Int }
        let drum = Array(" ABCDEFGHIJKLMNOPQRSTUVWXYZg0123456789r.?-$'#yp,!@&w")
        let wanted = (0..<4).map { c in UInt64(drum.firstIndex(of: Character(modules.first { $0["col"] as! Int == c }!["to"] as! String))!) }
        #expect(wanted == [1, 2, 3, 4] && order == [0, 1, 2, 3])

        let flapd = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound"])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(await flapd.waitForLog("using plain termios"))
        #expect(try await http("POST", port: port, body: Data(#"{"text":"ABCD"}"#.utf8)).status == 201)
        #expect(await eventually { display.received.withLock { $0.last?.flaps == wanted } }, "\(display.received.withLock { $0 })\n\(flapd.stderr)")
        // Every frame is a state on the way: modules take their targets in cascade order.
        let states = display.received.withLock { $0.map(\.flaps) }
        var seen: [[UInt64]] = []
        for s in states where seen.last != s { seen.append(s) }
        for s in seen {
            let set = (0..<4).filter { s[$0] == wanted[$0] }
            #expect(set == Array(order.prefix(set.count)), "\(s) is not a cascade prefix")
        }
        #expect(seen.count >= 3, "the cascade went out in steps: \(seen)")
        // The dropped frame and the corrupt answer were retried; status says so.
        let report = try await http("GET", port: port, path: "/status").json as? [String: Any]
        let serial = ((report?["boards"] as? [[String: Any]])?.first?["modules"] as? [String: Any])?["serial"] as? [String: Any]
        #expect((serial?["retries"] as? Int ?? 0) >= 2 && serial?["crc_errors"] as? Int == 1, "\(String(describing: serial))")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }
}

/// flapd driving flapbus controllers (a scripted one on a pty): HELLO and SYNC first, then every
/// module's move as `flapd plan` has it — module, target flap, start instant, flip — at once.
@Suite struct FlapbusOutputTests {
    @Test func movesGoOutAsPlanned() async throws {
        // HELLO answered, SYNC answered, the first MOVE's answer lost once (it is sent again).
        let controller = try ScriptedController(modules: 8, [.answer, .answer, .drop])
        defer { controller.stop() }
        let config = try configFile("""
            local_api: { port: 0 }
            sound: { enabled: false }
            boards:
              - id: wall
                rows: 2
                cols: 4
                output: flapbus
                serial: { port: \(controller.devicePath), baud: 115200, retry_ms: 40 }
                timing: { flip_ms: 80 }
            """)
        let plan = try FlapdProcess(["plan", "--to", "HI YOU", "--config", config])
        #expect(await plan.waitForExit() == 0, "\(plan.stderr)")
        let planned = try #require((try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["modules"] as? [[String: Any]])
        let drum = Array(" ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?+")

        let flapd = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound"])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(await eventually { controller.received.withLock { $0.count >= 2 } })
        #expect(controller.received.withLock { $0.prefix(2).map(\.type) } == [0x01, 0x02], "HELLO, then SYNC\n\(flapd.stderr)")
        #expect(try await http("POST", port: port, body: Data(#"{"text":"HI YOU"}"#.utf8)).status == 201)
        // After the start's MOVE frame (every module to where it is), the plan's.
        let plannedCount = planned.count
        #expect(await eventually { controller.moveFrames.dropFirst().joined().count == plannedCount }, "\(controller.moveFrames)")
        let moves = Array(controller.moveFrames.dropFirst().joined())
        // The same transition start for every module: start_micros − the plan's offset.
        let t0 = Set(moves.map { m -> UInt64 in
            let p = planned.first { ($0["row"] as! Int) * 4 + ($0["col"] as! Int) == m.module }!
            return m.startMicros - UInt64((p["start_ms"] as! Double) * 1000)
        })
        #expect(t0.count == 1, "\(moves)")
        for p in planned {
            let module = (p["row"] as! Int) * 4 + (p["col"] as! Int)
            let m = try #require(moves.first { $0.module == module })
            #expect(m.flap == drum.firstIndex(of: Character(p["to"] as! String)), "module \(module)")
            #expect(m.flipMs == 80)
        }
        // The lost answer was made up for by sending the frame again, unchanged; status counts it.
        // (Up to 8 frames are in flight: the message's MOVE may go out before the retry does.)
        @Sendable func sentTwice() -> [ScriptedController.Received] {
            controller.received.withLock { r in r.filter { $0.type == 0x10 && $0.nonce == r.first { $0.type == 0x10 }?.nonce } }
        }
        #expect(await eventually { sentTwice().count >= 2 }, "\(controller.received.withLock { $0 })")
        #expect(Set(sentTwice().map(\.payload)).count == 1, "\(sentTwice())\n\(flapd.stderr)")
        var serial: [String: Any]?
        for _ in 0..<1000 where (serial?["retries"] as? Int ?? 0) < 1 {  // the counter follows the write
            let report = try await http("GET", port: port, path: "/status").json as? [String: Any]
            serial = ((report?["boards"] as? [[String: Any]])?.first?["modules"] as? [String: Any])?["serial"] as? [String: Any]
        }
        #expect((serial?["retries"] as? Int ?? 0) >= 1 && serial?["controller_modules"] as? Int == 8, "\(String(describing: serial))")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }
}

extension FlapbusOutputTests {
    /// An LED controller is shown every flip's glyph at its 90° instant (SHOW, never MOVE); HOME
    /// goes first when asked; STATUS reports reach /status; a flip interval changed by SIGHUP
    /// reaches the wire.
    @Test func anLEDControllerIsShownEachFlipAndReportsItsModules() async throws {
        let controller = try ScriptedController(modules: 3, led: true, faulty: [2])
        defer { controller.stop() }
        func yaml(flip: Int) -> String {
            """
            local_api: { port: 0 }
            sound: { enabled: false }
            boards:
              - id: sign
                rows: 1
                cols: 3
                output: flapbus
                serial: { port: \(controller.devicePath), home_at_start: true, status_seconds: 1 }
                timing: { flip_ms: \(flip) }
            """
        }
        let config = try configFile(yaml(flip: 80))
        let plan = try FlapdProcess(["plan", "--to", "CAB", "--config", config])
        #expect(await plan.waitForExit() == 0, "\(plan.stderr)")
        let planned = try #require((try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["modules"] as? [[String: Any]])
        let flips = planned.reduce(0) { $0 + ($1["flips"] as! Int) }

        let flapd = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound"])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(try await http("POST", port: port, body: Data(#"{"text":"CAB"}"#.utf8)).status == 201)
        #expect(await eventually { controller.shows.count == flips }, "\(controller.shows)\n\(flapd.stderr)")
        #expect(Array(controller.types.prefix(3)) == [0x01, 0x02, 0x12] && controller.moves.isEmpty, "\(controller.types)")
        // Each flip's glyph (standard drum: blank, A, B, C … so the k-th flip from blank shows
        // code k) at the plan's clack instants, all from one transition start.
        let shows = controller.shows
        var starts: Set<UInt64> = []
        for p in planned {
            let mine = shows.filter { $0.module == p["col"] as! Int }
            #expect(mine.map(\.code) == Array(1...(p["flips"] as! Int)), "module \(p["col"]!)")
            let clacks = (p["clacks_ms"] as! [Double]).map { UInt64($0 * 1000) }
            starts.formUnion(zip(mine, clacks).map { $0.atMicros - $1 })
        }
        #expect(starts.count == 1, "\(shows)")
        // The STATUS report: module 2 is in fault.
        var modules: [String: Any]?
        let deadline = Date().addingTimeInterval(120)  // a bound against a hang: reports come every second
        while modules?["faulty"] as? Int != 1, Date() < deadline {
            let report = try await http("GET", port: port, path: "/status").json as? [String: Any]
            modules = (report?["boards"] as? [[String: Any]])?.first?["modules"] as? [String: Any]
        }
        #expect((modules?["reported"] as? [[String: Any]])?.map { $0["state"] as? String } == ["normal", "normal", "faulty"])
        #expect((modules?["serial"] as? [String: Any])?["controller_kind"] as? String == "led")
        // Once "CAB" has settled (the STATUS asked at start may have answered before its flips
        // ended), a new flip interval by SIGHUP: the next SHOWs are 150 ms apart.
        var moving: Bool?
        for _ in 0..<100_000 where moving != false {  // bounded against a hang; each round is a request
            let report = try await http("GET", port: port, path: "/status").json as? [String: Any]
            moving = (report?["boards"] as? [[String: Any]])?.first?["moving"] as? Bool
        }
        #expect(moving == false)
        try yaml(flip: 150).write(toFile: config, atomically: true, encoding: .utf8)
        kill(flapd.pid, SIGHUP)
        #expect(await flapd.waitForLog("config reloaded"))
        #expect(try await http("POST", port: port, body: Data(#"{"text":"CAF"}"#.utf8)).status == 201)
        #expect(await eventually { controller.shows.count == flips + 4 }, "\(controller.shows)\n\(flapd.stderr)")
        let next = controller.shows.dropFirst(flips).map(\.atMicros)
        #expect(controller.shows.dropFirst(flips).map(\.code) == [3, 4, 5, 6] && zip(next, next.dropFirst()).allSatisfy { $1 - $0 == 150_000 }, "\(next)")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }
}

/// A config file with these contents, in a folder of its own under the temporary directory.
func configFile(_ yaml: String) throws -> String {
    let dir = try scratchDirectory("flap-config")
    try yaml.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
    return dir + "/flapd.yaml"
}
