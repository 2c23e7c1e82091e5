import EndToEndSupport
import Foundation
import Testing

/// Issue 15, item 3, end to end: two Notes (3 × 15, code 62 a heart) addressed by the local API
/// as one 3 × 30 grid, as Note arrays are used; a message is laid out once across both.
@Suite struct NoteGridTests {
    @Test(.timeLimit(.minutes(5))) func theLocalAPIAddressesTwoNotesAsOneGrid() async throws {
        let dir = try scratchDirectory("flap-notes")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            boards: [{ id: left, model: note }, { id: right, model: note }]
            grids: [{ id: pair, boards: [[left, right]] }]
            local_api: { port: 0, board: pair }
            """.write(toFile: dir + "/notes.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/notes.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")

        let posted = try await http("POST", port: port, body: Data(#"{"text": "I ❤ notes"}"#.utf8))
        #expect(posted.status == 201, "\(String(describing: posted.json))")
        let codes = try #require((posted.json as? [String: Any])?["message"] as? [[Int]])
        #expect(codes.count == 3 && codes.allSatisfy { $0.count == 30 })
        #expect(Array(codes[1][10...18]) == [9, 0, 62, 0, 14, 15, 20, 5, 19], "centred on 30 columns, across the seam")
        // Each Note prints its own frame; the left one shows the heart as its flap does.
        #expect(await flapd.waitUntil { o, _ in o.contains("|          I \u{2764} N|") && o.contains("|OTES           |") }, "\(flapd.stdout)")
        #expect((try await http("GET", port: port).json as? [String: Any])?["message"] as? [[Int]] == codes)

        let flagship = Array(repeating: Array(repeating: 0, count: 22), count: 6)
        let wrong = try await http("POST", port: port, body: try JSONSerialization.data(withJSONObject: flagship))
        #expect(wrong.status == 400 && ((wrong.json as? [String: Any])?["error"] as? String)?.contains("expected 3 rows") == true,
                "\(String(describing: wrong.json))")
        var grid = Array(repeating: Array(repeating: 0, count: 30), count: 3)
        grid[0][14] = 63; grid[0][15] = 67
        #expect(try await http("POST", port: port, body: try JSONSerialization.data(withJSONObject: grid)).status == 201)
        #expect((try await http("GET", port: port).json as? [String: Any])?["message"] as? [[Int]] == grid)
    }
}
