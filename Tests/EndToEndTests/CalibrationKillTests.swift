import EndToEndSupport
import Foundation
import Testing
import TestWaits

/// Issue 35, item 2, from outside: a flapd killed (SIGKILL: no goodbye, as a power cut) or stopped
/// (SIGTERM) during a calibration session keeps the offset it saved and loses no message — the one
/// that waited for the session's end shows when flapd comes back (no session survives a restart). The board is
/// simulated drums (`chip: simulated`), so this runs on any machine.
@Suite struct CalibrationKillTests {
    @Test func aKillDuringCalibrationKeepsTheOffsetAndTheMessage() async throws {
        let dir = try scratchDirectory("flap-calibration-kill")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            local_api: { port: 0, key: k }
            state_dir: \(dir)
            boards:
              - id: wall
                rows: 1
                cols: 4
                output: gpio
                timing: { flip_ms: 60 }
                gpio: { chip: simulated, kind: step_dir, step: [0, 1, 2, 3], steps_per_revolution: 80, home: { lines: [4, 5, 6, 7] } }
            """.write(toFile: dir + "/c.yaml", atomically: true, encoding: .utf8)
        func request(_ method: String, _ path: String, _ body: String? = nil, port: Int) async throws -> (status: Int, json: [String: Any]) {
            let r = try await http(method, port: port, path: path, body: body.map { Data($0.utf8) }, key: "k")
            return (r.status, r.json as? [String: Any] ?? [:])
        }
        /// A GET answered as JSON, waited for on the calling thread (`eventually` polls off the pool).
        @Sendable func get(_ path: String, port: Int) -> Any? { blockingHTTP("GET", port: port, path: path, key: "k").json }
        func still(_ port: Int) async -> Bool {
            await eventually { ((get("/status", port: port) as? [String: Any])?["boards"] as? [[String: Any]])?.first?["moving"] as? Bool == false }
        }

        let first = try FlapdProcess(["run", "--config", dir + "/c.yaml", "--plain", "--no-sound"])
        let port = try #require(await first.apiPort(), "\(first.stderr)")
        #expect(await still(port), "homed at start")
        #expect(try await request("POST", "/calibration", #"{"action": "start"}"#, port: port).status == 200)
        #expect(try await request("POST", "/calibration", #"{"action": "step", "row": 0, "col": 2, "steps": 5}"#, port: port).status == 200)
        #expect(await still(port))
        // Five steps past the magnet, the maker sees B (its edge 4 steps from flap 0's): offset 1.
        let marked = try await request("POST", "/calibration", #"{"action": "mark", "row": 0, "col": 2, "showing": "B"}"#, port: port)
        #expect((marked.json["module"] as? [String: Any])?["saved"] as? Int == 1, "\(marked)")
        let held = try await request("POST", "/local-api/message", #"{"text": "GO"}"#, port: port)
        #expect(held.status == 202 && held.json["held"] as? String == "calibration", "\(held)")
        kill(first.pid, SIGKILL)
        _ = await first.waitForExit()

        let saved = try String(contentsOfFile: dir + "/calibration.json", encoding: .utf8)
        #expect(saved.replacingOccurrences(of: " ", with: "").replacingOccurrences(of: "\n", with: "").contains("\"wall\":[0,0,1,0]"), "\(saved)")
        let second = try FlapdProcess(["run", "--config", dir + "/c.yaml", "--plain", "--no-sound"])
        let port2 = try #require(await second.apiPort(), "\(second.stderr)")
        let session = try await request("GET", "/calibration", port: port2)
        #expect((session.json["session"] as? [String: Any])?["active"] as? Bool == false, "no session survives a restart")
        // The message that waited shows: G and O in the middle of four.
        #expect(await eventually { (get("/local-api/message", port: port2) as? [String: Any])?["message"] as? [[Int]] == [[0, 7, 15, 0]] })
        // A SIGTERM (systemctl stop) during a session: the same.
        #expect(try await request("POST", "/calibration", #"{"action": "start"}"#, port: port2).status == 200)
        #expect(try await request("POST", "/local-api/message", #"{"text": "NO"}"#, port: port2).status == 202)
        second.terminate()
        #expect(await second.waitForExit() == 0)
        let third = try FlapdProcess(["run", "--config", dir + "/c.yaml", "--plain", "--no-sound"])
        let port3 = try #require(await third.apiPort(), "\(third.stderr)")
        #expect(await eventually { (get("/local-api/message", port: port3) as? [String: Any])?["message"] as? [[Int]] == [[0, 14, 15, 0]] })
        #expect(try String(contentsOfFile: dir + "/calibration.json", encoding: .utf8) == saved, "the offsets as they were")
        third.terminate()
        #expect(await third.waitForExit() == 0)
    }
}
