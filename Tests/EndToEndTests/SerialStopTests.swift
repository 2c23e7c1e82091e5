import FlapSerialTesting
import Foundation
import Testing

/// Issue 12 (6, serial): SIGTERM mid-transition on a bus, against its scripted peer — what
/// flapd saves is where the modules were last sent, and a module is never sent anywhere its
/// flip in progress does not end.
@Suite struct SerialStopTests {
    func savedPositions(_ dir: String) -> [Int]? {
        guard let data = FileManager.default.contents(atPath: dir + "/boards.json"),
              let doc = try? JSONSerialization.jsonObject(with: Data(data)) as? [String: Any] else { return nil }
        return (doc["boards"] as? [[String: Any]])?.first?["positions"] as? [Int]
    }

    /// flapbus controllers time their modules themselves: each module's last MOVE is where it
    /// ends. The stop MOVE of a moving module must name the flap its flip in progress ends on by
    /// the controller's clock (the instants of the MOVEs it holds) — anything else is a full turn
    /// or a stop short — and that flap is what `boards.json` says.
    @Test func aStopLeavesEveryFlapbusModuleWhereTheSavedStateSays() async throws {
        let controller = try ScriptedController(modules: 3)
        defer { controller.stop() }
        let dir = try scratchDirectory("flap-bus-stop")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try configFile("""
            local_api: { port: 0 }
            sound: { enabled: false }
            boards:
              - id: wall
                rows: 1
                cols: 3
                output: flapbus
                serial: { port: \(controller.devicePath), baud: 115200, retry_ms: 40 }
                timing: { flip_ms: 200, column_stagger_ms: 100 }
            """)
        let flapd = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound", "--state-dir", dir])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        // '+' is the standard drum's last flap: 39 flips of 200 ms for every module.
        #expect(try await http("POST", port: port, body: Data(#"{"text":"+++"}"#.utf8)).status == 201)
        #expect(await eventually { controller.moves.count >= 3 }, "\(flapd.stderr)")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0, "\(flapd.stderr)")
        let saved = try #require(savedPositions(dir), "\(flapd.stderr)")
        #expect(saved.contains { $0 < 39 }, "the stop came mid-transition: \(saved)")
        let moves = controller.moves
        for m in 0..<3 {
            let first = try #require(moves.first { $0.module == m }, "\(moves)")
            let last = try #require(moves.last { $0.module == m })
            #expect(first.flap == 39)
            // Flips started by the stop's instant, by the controller's clock (one starting at
            // that very instant counts as begun).
            let flip = UInt64(first.flipMs) * 1000
            let started = last.startMicros < first.startMicros ? 0 : Int((last.startMicros - first.startMicros) / flip) + 1
            #expect(last.flap == min(39, started), "module \(m): stopped at \(last.startMicros), its flip in progress ends on \(min(39, started)), sent to \(last.flap)")
            #expect(saved[m] == last.flap, "module \(m): saved \(saved[m]), sent to \(last.flap)")
        }
    }
}
