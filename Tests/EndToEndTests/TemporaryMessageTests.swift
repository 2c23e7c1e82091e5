import EndToEndSupport
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

    /// Through flaphub: the options ride with the message (stored with it) to the board.
    @Test(.timeLimit(.minutes(5))) func aTemporaryMessageThroughTheHubReturnsToTheSendersMessage() async throws {
        let hub = try await HubHarness()
        try await hub.users(["alice", "board"], friends: [("alice", "board")])
        try await hub.start()
        let state = try scratchDirectory("flap-temporary-hub")
        let board = try FlapdProcess(["run", "--config", try hub.flapdConfig(board: "board"), "--plain", "--no-sound", "--state-dir", state])
        defer { board.terminate() }
        #expect(await board.waitForLog("message API connected"), "\(board.stderr)")
        _ = try await hub.send("before", from: "alice", to: "board")
        #expect(await board.waitForFrame { words($0) == ["BEFORE"] }, "\(board.stdout)")
        let sent = try await hub.request("POST", "/api/v1/messages", as: "alice",
                                         json: ["recipients": ["board"], "content": "alert", "duration": 10, "forced": true,
                                                "transition": ["strategy": "column", "step_interval_ms": 10]])
        #expect(sent.status == 201, "\(sent.json)")
        let id = try #require((sent.json["results"] as? [[String: Any]])?.first?["messageID"] as? String)
        let stored = try await hub.request("GET", "/api/v1/messages/\(id)", as: "alice").json
        #expect(stored["duration"] as? Double == 10 && stored["forced"] as? Bool == true, "\(stored)")
        #expect(await board.waitForFrame { words($0) == ["ALERT"] }, "\(board.stdout)")
        #expect(await board.waitForFrame { words($0) == ["BEFORE"] }, "after its 10 s the sender's message is back: \(board.stdout)")
    }
}
