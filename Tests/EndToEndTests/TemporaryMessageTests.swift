import Foundation
import Testing

/// Issue 15, item 6, end to end: a temporary message from the local API (`duration`) shows, the
/// board survives a restart in the middle of it, and then returns to what it showed before.
@Suite struct TemporaryMessageTests {
    @Test(.timeLimit(.minutes(5))) func anAlertShowsThenTheBoardReturnsEvenAcrossARestart() async throws {
        let dir = try scratchDirectory("flap-temporary")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        let port = try #require(await first.apiPort(), "\(first.stderr)")
        #expect(try await http("POST", port: port, body: Data(#"{"text":"before"}"#.utf8)).status == 201)
        #expect(await first.waitUntil { o, _ in frames(in: o).last?[2] == "        BEFORE        " })
        for (body, error) in [(#"{"text":"x","duration":5}"#, "duration: 5.0 s is outside 10 s – 12 h (10…43200)"),
                              (#"{"text":"x","duration":"long"}"#, "duration is not a number of seconds")] {
            let refused = try await http("POST", port: port, body: Data(body.utf8))
            #expect(refused.status == 400 && (refused.json as? [String: Any])?["error"] as? String == error, "\(String(describing: refused.json))")
        }
        let send = try FlapdProcess(["send", "--url", "http://127.0.0.1:\(port)", "--duration", "12", "alert"])
        #expect(await send.waitForExit() == 0, "\(send.stderr)")
        #expect(await first.waitUntil { o, _ in frames(in: o).last?[2] == "        ALERT         " })
        first.terminate()
        #expect(await first.waitForExit() == 0)

        // Restarted within the alert's 12 s or after them: either way the board ends on BEFORE.
        let second = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        defer { second.terminate() }
        #expect(await second.waitUntil { o, _ in frames(in: o).last?[2] == "        BEFORE        " }, "\(second.stdout)\n\(second.stderr)")
        let port2 = try #require(await second.apiPort())
        let shown = (try await http("GET", port: port2).json as? [String: Any])?["message"] as? [[Int]]
        #expect(shown?[2][8...13].map { $0 } == [2, 5, 6, 15, 18, 5])
    }
}
