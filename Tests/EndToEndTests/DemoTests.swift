import EndToEndSupport
import Foundation
import Testing

@Suite(.serialized) struct DemoTests {
    @Test func onceMessagePlaysAndPrintsTheFinalBoard() async throws {
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("flapd-trace-\(getpid()).jsonl")
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--once", "Hello, {63} world", "--trace", trace.path])
        #expect(await flapd.waitForExit() == 0, "\(flapd.stderr)")
        let blank = String(repeating: " ", count: 22)
        #expect(flapd.stdout == """
            +----------------------+
            |\(blank)|
            |\(blank)|
            |    HELLO, r WORLD    |
            |\(blank)|
            |\(blank)|
            |\(blank)|
            +----------------------+

            """, "the demo's virtual board has every Vestaboard glyph: the comma, and the red chip (r in plain frames)")
        // One trace line per flip, matching the plan's flip count.
        let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
        let plan = try FlapdProcess(["plan", "--to", "Hello, {63} world"])
        #expect(await plan.waitForExit() == 0)
        let json = try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as! [String: Any]
        #expect(lines.count == json["flip_count"] as! Int)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        #expect(Set(first.keys) == ["board", "transition", "row", "col", "flip", "glyph", "planned_ms", "actual_ms", "late_us", "actual_ns"])
    }

    /// Issue 15: a board's transition style is what the conductor plays — each module's flips
    /// fire at the instants of a table written here (edges to center, 30 ms a step; 120 ms flips
    /// clack at their 60 ms point).
    @Test func theConductorPlaysTheBoardsStyle() async throws {
        let dir = try scratchDirectory("flap-style")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "boards: [{ id: w, rows: 1, cols: 5, transition: { strategy: edges-to-center, step_interval_ms: 30 } }]\n"
            .write(toFile: dir + "/c.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/c.yaml", "--plain", "--no-sound", "--once", "ABBBA", "--trace", dir + "/t.jsonl"])
        #expect(await flapd.waitForExit() == 0, "\(flapd.stderr)")
        var planned: [Int: [Double]] = [:]
        for line in try String(contentsOfFile: dir + "/t.jsonl", encoding: .utf8).split(separator: "\n") {
            let e = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            planned[e["col"] as! Int, default: []].append((e["planned_ms"] as! NSNumber).doubleValue)
        }
        // A is one flip from blank, B two.
        #expect(planned == [0: [60], 1: [90, 210], 2: [120, 240], 3: [90, 210], 4: [60]], "\(planned)")
    }

    @Test func postsOverHTTPReachTheBoard() async throws {
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--key", "sesame"])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")

        #expect(try await http("POST", port: port, body: Data(#"{"text":"x"}"#.utf8)).status == 401)
        #expect(try await http("POST", port: port, body: Data(#"{"text":"x"}"#.utf8), key: "sesam").status == 401)

        let bad = try await http("POST", port: port, body: Data("{oops".utf8), key: "sesame")
        #expect(bad.status == 400)
        #expect((bad.json as? [String: Any])?["error"] as? String == "body is not JSON: expected a key in double quotes, found 'o' at line 1, column 2 (byte 1)")
        let dims = try await http("POST", port: port, body: Data("[[1,2,3]]".utf8), key: "sesame")
        #expect(dims.status == 400)
        #expect(((dims.json as? [String: Any])?["error"] as? String)?.contains("expected 6 rows") == true)
        let code = try await http("POST", port: port, body: Data(#"{"characters":[[43]]}"#.utf8), key: "sesame")
        #expect(code.status == 400)
        let huge = try await http("POST", port: port, body: Data(repeating: 0x20, count: 70_000), key: "sesame")
        #expect(huge.status == 413)

        // Codes: H I on the top-left.
        var rows = Array(repeating: Array(repeating: 0, count: 22), count: 6)
        rows[0][0] = 8; rows[0][1] = 9
        let posted = try await http("POST", port: port, body: try JSONSerialization.data(withJSONObject: rows), key: "sesame")
        #expect(posted.status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?.first?.hasPrefix("HI ") == true }, "\(flapd.stdout)")
        let got = try await http("GET", port: port, key: "sesame")
        #expect((got.json as? [String: Any])?["message"] as? [[Int]] == rows)

        // Two messages back to back: the second re-plans mid-transition and is the one that stays.
        #expect(try await http("POST", port: port, body: Data(#"{"text":"ZZZZ"}"#.utf8), key: "sesame").status == 201)
        #expect(try await http("POST", port: port, body: Data(#"{"text":"ABC"}"#.utf8), key: "sesame").status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2] == "         ABC          " }, "\(flapd.stdout)")

        flapd.terminate()
        #expect(await flapd.waitForExit() == 0, "SIGTERM is a clean stop")
    }

    @Test func sendPostsToARunningDemo() async throws {
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0"])
        let port = try #require(await flapd.apiPort())
        let send = try FlapdProcess(["send", "--url", "http://127.0.0.1:\(port)", "good morning"])
        #expect(await send.waitForExit() == 0, "\(send.stderr)")
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2] == "     GOOD MORNING     " }, "\(flapd.stdout)")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
        let refused = try FlapdProcess(["send", "--url", "http://127.0.0.1:\(port)", "nobody home"])
        #expect(await refused.waitForExit() == 1)
        #expect(refused.stderr.contains("cannot reach"))
    }
}
