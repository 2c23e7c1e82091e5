import EndToEndSupport
import Foundation
import Testing

/// Issue 38, item 1: Vestaboard's Cloud API and Read/Write API on flaphub, as the PyPI `vesta`
/// client (0.15.0: `CloudClient`, `ReadWriteClient`, pointed at the hub by `base_url`) speaks
/// them, against a real flaphub and a real flapd subscribed to it.
@Suite struct CloudAPITests {
    /// What the script does, in order; it prints one JSON object of what it saw. A read waits
    /// (bounded, 120 s) until the board says it shows what was written.
    static let script = #"""
        import json, sys, time, urllib.error, warnings, vesta
        warnings.simplefilter("ignore", DeprecationWarning)
        base, token, reader_token = sys.argv[1], sys.argv[2], sys.argv[3]
        cloud = vesta.CloudClient(token, base_url=base)
        reader = vesta.CloudClient(reader_token, base_url=base)
        rw = vesta.ReadWriteClient(token, base_url=base + "/")
        out = {}
        def code(c):
            return 0 if c == " " else ord(c) - 64
        def text(rows):
            return ["".join(" " if n == 0 else chr(64 + n) if n <= 26 else "?" for n in row).strip() for row in rows or []]
        def wait_for(line):
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                rows = reader.read_message()
                if line in text(rows):
                    return rows
                time.sleep(0.05)
            return reader.read_message()
        def status(call):
            try:
                call()
                return 200
            except urllib.error.HTTPError as e:
                return [e.code, json.loads(e.read()).get("error")]
        out["transition-default"] = reader.get_transition()
        out["read-only-write"] = status(lambda: reader.write_message("NOPE"))
        out["read-only-transition"] = status(lambda: reader.set_transition("drift", "fast"))
        out["wrong-token"] = status(lambda: vesta.CloudClient("vb_wrong", base_url=base).read_message())
        out["bad-transition"] = status(lambda: cloud.http.request("PUT", "/transition", json={"transition": "zigzag", "transitionSpeed": "fast"}))
        out["too-wide"] = status(lambda: cloud.http.request("POST", "", json={"characters": [[1] * 23]}))
        out["set-transition"] = cloud.set_transition("wave", "gentle")
        out["get-transition"] = reader.get_transition()
        out["rw-unforced"] = rw.write_message("SHH")
        out["cloud-forced"] = cloud.write_message("HELLO CLOUD", forced=True)
        out["read-text"] = text(wait_for("HELLO CLOUD"))
        rows = [[0] * 22 for _ in range(6)]
        rows[0][0:5] = [code(c) for c in "CHARS"]
        rows[1][0:3] = [63, 64, 65]
        out["rw-chars-forced"] = cloud.write_message(rows, forced=True)
        out["read-chars"] = wait_for("CHARS")
        out["rw-read"] = rw.read_message()
        print(json.dumps(out))
        """#

    @Test(.timeLimit(.minutes(10)), arguments: HubEngine.allCases) func vestaCloudAndReadWriteClientsWorkUnchanged(_ engine: HubEngine) async throws {
        let dir = try scratchDirectory("flap-cloud")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let venv = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/venv", "cloud"], executable: "/bin/bash")
        try #require(await venv.waitForSlowExit() == 0, "the cloud venv: \(venv.stderr)")
        let python = venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        let hub = try await HubHarness(engine: engine)
        try await hub.users(["board", "alice"], friends: [("alice", "board")])
        try await hub.start()
        let token = try await hub.admin(["token", "add", "board"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let reader = try await hub.admin(["token", "add", "board", "--read"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let listed = try await hub.admin(["token", "list", "board"])
        #expect(listed.split(separator: "\n").count == 2 && listed.contains("read, write") && !listed.contains(token), "\(listed)")

        // Quiet hours hold everything but forced messages; the board's own account (the Cloud
        // API's sender) has the top four rows, the local API the bottom two.
        func time(_ offset: Double) -> String {
            let c = Calendar.current.dateComponents([.hour, .minute], from: Date().addingTimeInterval(offset))
            return String(format: "%02d:%02d", c.hour!, c.minute!)
        }
        let config = try hub.flapdConfig(board: "board", extra: """
            quiet_hours: { from: "\(time(-3600))", to: "\(time(3600))", messages: hold }
            zones:
              - { rows: [0, 3], senders: [board] }
              - { rows: [4, 5], senders: ["@local"] }
            """)
        let trace = dir + "/trace.jsonl"
        let flapd = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound", "--state-dir", dir, "--trace", trace])
        defer { flapd.terminate() }
        #expect(await flapd.waitForLog("message API connected"), "\(flapd.stderr)")
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(try await http("POST", port: port, body: Data(#"{"text":"LOCAL","forced":true}"#.utf8)).status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last.map(words) == ["LOCAL"] }, "\(flapd.stdout)")

        try Self.script.write(toFile: dir + "/cloud.py", atomically: true, encoding: .utf8)
        let client = try FlapdProcess([dir + "/cloud.py", hub.url, token, reader], executable: python)
        #expect(await client.waitForSlowExit() == 0, "\(client.stderr)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(client.stdout.utf8)) as? [String: Any], "\(client.stdout)\n\(client.stderr)")

        #expect(seen["transition-default"] as? [String: String] == ["transition": "classic", "transitionSpeed": "fast"])
        #expect(seen["read-only-write"] as? [AnyHashable] == [403, "this token does not write"])
        #expect(seen["read-only-transition"] as? [AnyHashable] == [403, "this token does not write"])
        #expect(seen["wrong-token"] as? [AnyHashable] == [401, "Invalid token"])
        #expect((seen["bad-transition"] as? [AnyHashable])?.first == AnyHashable(400))
        #expect(seen["too-wide"] as? [AnyHashable] == [400, "characters: pattern is larger than 6 rows × 22 columns"], "\(seen)")
        #expect(seen["set-transition"] as? [String: String] == ["transition": "wave", "transitionSpeed": "gentle"])
        #expect(seen["get-transition"] as? [String: String] == ["transition": "wave", "transitionSpeed": "gentle"])
        #expect(seen["rw-unforced"] as? Bool == true && seen["cloud-forced"] as? Bool == true && seen["rw-chars-forced"] as? Bool == true)
        // What the board shows, the local zone with it: the board's layout, not the message's.
        let readText = try #require(seen["read-text"] as? [String], "\(seen)")
        #expect(readText.count == 6 && readText[0...3].contains("HELLO CLOUD") && readText[4] == "LOCAL" && !readText.contains("SHH"), "\(readText)")
        let chars = try #require(seen["read-chars"] as? [[Int]], "\(seen)")
        #expect(chars.count == 6 && chars.allSatisfy { $0.count == 22 })
        #expect(Array(chars[0].prefix(5)) == [3, 8, 1, 18, 19] && Array(chars[1].prefix(3)) == [63, 64, 65], "\(chars)")
        #expect(seen["rw-read"] as? [[Int]] == chars, "the Read/Write client reads the same layout")
        let local = try await http("GET", port: port, key: nil)
        #expect((local.json as? [String: Any])?["message"] as? [[Int]] == chars, "the hub's layout is what flapd's own API reads")

        // The unforced write waited for the quiet hours: never shown, never reported displayed.
        #expect(!flapd.stdout.contains("SHH"))
        let sent = try await hub.request("GET", "/api/v1/messages/sent", as: "board").json["messages"] as? [[String: Any]] ?? []
        let statuses = Dictionary(sent.compactMap { s -> (String, String)? in
            guard let m = s["message"] as? [String: Any], let c = m["content"] as? String, let st = m["status"] as? String else { return nil }
            return (c, st)
        }, uniquingKeysWith: { a, _ in a })
        #expect(statuses["SHH"] != "displayed" && statuses["HELLO CLOUD"] == "displayed", "\(sent)")

        // A friend's message without a transition of its own takes the board's.
        let id = try await hub.send("from alice", from: "alice", to: "board")
        let aliceSent = try await hub.request("GET", "/api/v1/messages/\(id)", as: "alice").json
        #expect(aliceSent["transition"] as? [String: String] == ["transition": "wave", "speed": "gentle"], "\(aliceSent)")

        // The transition the owner set is what played: wave (by column), gentle (120 ms a column),
        // where the board's own style would start every column within 2 ms of the last.
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        let flips = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let cloudRows = flips.filter { ($0["row"] as? Int).map { $0 < 4 } == true }
        let starts = Dictionary(grouping: cloudRows) { "\($0["transition"] as? Int ?? -1)/\($0["col"] as? Int ?? -1)" }
            .mapValues { $0.compactMap { $0["planned_ms"] as? Double }.min() ?? 0 }
        let late = starts.filter { key, ms in ms < 120 * Double(Int(key.split(separator: "/")[1]) ?? 0) - 0.5 }
        #expect(!starts.isEmpty && late.isEmpty, "columns that started before their wave step: \(late)")
        #expect(starts.keys.contains { Int($0.split(separator: "/")[1]) ?? 0 >= 10 }, "a far column flipped: \(starts.keys.sorted())")
    }
}
