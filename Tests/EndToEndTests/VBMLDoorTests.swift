import EndToEndSupport
import FlapMessages
import Foundation
import Testing

/// Issue 15, item 2: VBML through every door — the local API (as Vestaboard's takes it), `flapd
/// send --vbml FILE`, and the message API (`contentType: vbml`) — rendered by flapd on the size
/// of the board or zone that shows it.
@Suite struct VBMLDoorTests {
    static let hello = #"{"props":{"who":"wall"},"components":[{"style":{"justify":"center","align":"center"},"template":"Hello {{who}}"}]}"#

    @Test(.timeLimit(.minutes(5))) func theLocalAPIAndSendRenderVBMLOnTheBoard() async throws {
        let dir = try scratchDirectory("flap-vbml-door")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")

        let posted = try await http("POST", port: port, body: Data(Self.hello.utf8))
        #expect(posted.status == 201, "\(String(describing: posted.json))")
        // One line, centred on 6 × 22: row 2, from column 6.
        var expected = Array(repeating: Array(repeating: 0, count: 22), count: 6)
        expected[2].replaceSubrange(6..<16, with: [8, 5, 12, 12, 15, 0, 23, 1, 12, 12])
        #expect((posted.json as? [String: Any])?["message"] as? [[Int]] == expected)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2] == "      HELLO WALL      " }, "\(flapd.stdout)")
        #expect((try await http("GET", port: port).json as? [String: Any])?["message"] as? [[Int]] == expected)

        let bad = try await http("POST", port: port, body: Data(#"{"components":[{"template":"A{43}"}]}"#.utf8))
        #expect(bad.status == 400)
        #expect((bad.json as? [String: Any])?["error"] as? String == "VBML: components[0]: {43} is not a Vestaboard character code")
        let both = try await http("POST", port: port, body: Data(#"{"text":"x","components":[]}"#.utf8))
        #expect(both.status == 400)

        // flapd send --vbml: a chip row drawn raw, and text right-aligned on the bottom row.
        try #"{"components":[{"rawCharacters":[[63,64,65]]},{"style":{"height":1,"width":22,"justify":"right","absolutePosition":{"x":0,"y":5}},"template":"bye"}]}"#
            .write(toFile: dir + "/doc.json", atomically: true, encoding: .utf8)
        let send = try FlapdProcess(["send", "--url", "http://127.0.0.1:\(port)", "--vbml", dir + "/doc.json"])
        #expect(await send.waitForExit() == 0, "\(send.stderr)")
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[5] == "                   BYE" }, "\(flapd.stdout)")
        let shown = (try await http("GET", port: port).json as? [String: Any])?["message"] as? [[Int]]
        #expect(shown?[0].prefix(4) == [63, 64, 65, 0])

        try "{\"components\": [{\"template\": \"x\", \"style\": {\"width\": 0}}]}".write(toFile: dir + "/bad.json", atomically: true, encoding: .utf8)
        let refused = try FlapdProcess(["send", "--url", "http://127.0.0.1:\(port)", "--vbml", dir + "/bad.json"])
        #expect(await refused.waitForExit() == 1)
        #expect(refused.stderr.contains("components[0].style.width: 0 is not 1–132"), "\(refused.stderr)")
        let neither = try FlapdProcess(["send", "--url", "http://127.0.0.1:\(port)"])
        #expect(await neither.waitForExit() != 0)
        #expect(neither.stderr.contains("give the message text, or --vbml FILE"), "\(neither.stderr)")
    }

    @Test(.timeLimit(.minutes(5))) func aVBMLMessageFromTheMessageAPIIsRenderedOnItsZone() async throws {
        let hub = try await HubHarness()
        try await hub.users(["alice", "board"], friends: [("alice", "board")])
        try await hub.start()
        let state = try scratchDirectory("flap-vbml-msg")
        let config = try hub.flapdConfig(board: "board", extra: """
            zones:
              - { rows: [0, 2], senders: [alice] }
              - { rows: [3, 5], senders: "*" }
            """)
        let board = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound", "--state-dir", state])
        defer { board.terminate() }
        #expect(await board.waitForLog("message API connected"), "\(board.stderr)")
        let refused = try await hub.request("POST", "/api/v1/messages", as: "alice",
                                            json: ["recipients": ["board"], "contentType": "vbml", "content": #"{"components":[{"template":"{99}"}]}"#])
        #expect(refused.status == 400 && (refused.json["error"] as? String)?.contains("vbml: components[0]: {99}") == true, "\(refused.json)")
        // A document Foundation's decoder traps on (513 `[`): refused, and the hub still answers.
        let deep = try await hub.request("POST", "/api/v1/messages", as: "alice",
                                         json: ["recipients": ["board"], "contentType": "vbml", "content": String(repeating: "[", count: 513)])
        #expect(deep.status == 400 && (deep.json["error"] as? String)?.contains("vbml: not JSON within the limits: nested deeper") == true,
                "\(deep.json)")
        let sent = try await hub.request("POST", "/api/v1/messages", as: "alice",
                                         json: ["recipients": ["board"], "contentType": "vbml", "content": Self.hello])
        #expect(sent.status == 201, "\(sent.json)")
        // Centred on alice's zone (3 × 22): its middle row, row 1 of the board.
        #expect(await board.waitForFrame { $0[1] == "      HELLO WALL      " && words(Array($0[3...])) == [] }, "\(board.stdout)\n\(board.stderr)")
    }
}
