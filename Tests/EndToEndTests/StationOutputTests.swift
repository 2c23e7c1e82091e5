import FlapSerialTesting
import EndToEndSupport
import Foundation
import Testing
import TestWaits

/// flapd driving salvaged station modules (Krone FBM, Omega RS-485) on a pty: every module is
/// sent its flap when the port opens, then each moving module its new flap in the cascade
/// order of `flapd plan`, read back by the independent decoders.
@Suite struct StationOutputTests {
    @Test(arguments: ["krone", "omega"]) func eachModuleIsSetInCascadeOrder(bus: String) async throws {
        let peer = try StationPeer(device: true)
        defer { peer.hangUp() }
        let config = try configFile("""
            local_api: { port: 0 }
            sound: { enabled: false }
            boards:
              - id: platform
                rows: 2
                cols: 3
                output: \(bus)
                serial: { port: \(peer.devicePath!), addresses: [130, 131, 132, 7, 8, 9] }
            """)
        let plan = try FlapdProcess(["plan", "--to", "GO\nNOW", "--config", config])
        #expect(await plan.waitForExit() == 0, "\(plan.stderr)")
        let planned = try #require((try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["modules"] as? [[String: Any]])
        let drum = Array(" ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?+")
        let addresses = [130, 131, 132, 7, 8, 9]
        let setting = bus == "krone" ? 8 : 0xC0
        @Sendable func sets() -> [[Int]] {
            let stream = peer.received.withLock { $0 }
            let commands = bus == "krone" ? Independent.krone(stream) : Independent.omega(stream)
            return commands.filter { $0.command == setting }.map { [$0.address!, $0.value!] }
        }

        let flapd = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound"])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        // The port opens: every module is told to show a blank.
        #expect(await eventually { sets().count >= 6 }, "\(flapd.stderr)")
        #expect(Array(sets().prefix(6)) == addresses.map { [$0, 0] })
        #expect(try await http("POST", port: port, body: Data(#"{"text":"GO\nNOW"}"#.utf8)).status == 201)
        let plannedCount = planned.count
        #expect(await eventually { sets().count == 6 + plannedCount }, "\(sets())\n\(flapd.stderr)")
        let moved = Array(sets().dropFirst(6))
        let wanted = planned.sorted { ($0["start_ms"] as! Double) < ($1["start_ms"] as! Double) }.map { p in
            [addresses[(p["row"] as! Int) * 3 + (p["col"] as! Int)], drum.firstIndex(of: Character(p["to"] as! String))!]
        }
        #expect(moved == wanted, "in cascade order, as planned")
        if bus == "krone" {
            // SET_ALL ends the stream: the last codes set are started.
            #expect(Independent.krone(peer.received.withLock { $0 }).last == .init(command: 1))
        }
        let report = try await http("GET", port: port, path: "/status").json as? [String: Any]
        let serial = ((report?["boards"] as? [[String: Any]])?.first?["modules"] as? [String: Any])?["serial"] as? [String: Any]
        #expect(serial?["protocol"] as? String == bus && serial?["connected"] as? Bool == true, "\(String(describing: serial))")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }
}
