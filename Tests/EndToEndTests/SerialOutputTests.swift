import FlapSerialTesting
import Foundation
import Testing

/// flapd driving an open splitflap display on a serial device (a pseudo-terminal here, through
/// the termios transport, since libserialport refuses ptys): each module's target is sent at
/// its cascade instant, as `flapd plan` says, and the display's answers are honoured.
@Suite struct SerialOutputTests {
    @Test func eachModulesTargetGoesOutAtItsCascadeInstant() async throws {
        // The display leaves the first two frames unanswered once each: the retries go out.
        let display = try ScriptedDisplay(device: [.ack, .drop, .ack, .corruptAck])
        defer { display.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flap-serial-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/flapd.yaml"
        try """
            local_api: { port: 0 }
            sound: { enabled: false }
            boards:
              - id: station
                rows: 1
                cols: 4
                output: splitflap
                serial: { port: \(display.devicePath!), baud: 230400, retry_ms: 40 }
                timing: { flip_ms: 50, column_stagger_ms: 150, row_stagger_ms: 0 }
            """.write(toFile: config, atomically: true, encoding: .utf8)

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
        #expect(await eventually { display.received.withLock { $0.last?.flaps == wanted } }, "\(display.received.withLock { $0 })")
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
