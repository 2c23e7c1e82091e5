import FlapCore
import EndToEndSupport
import Foundation
import Testing

/// Issue 17, item 4: flaphub's sender page in a real browser — Debian's Chromium, headless,
/// driven by Selenium through Debian's chromedriver (`Tests/clients/hub-web-check.py`) — against
/// a real flaphub and a real flapd whose board gives alice the top three rows with her name on
/// top, on the standard drum (no commas, no colours). A one-time link signs in and is refused the
/// second time; the friend shows the size the board said; the preview is what the wall then
/// shows, module for module, with what was cut and substituted named; a message sent goes to
/// displayed; one scheduled an hour ahead is stored with that instant, shown scheduled, and
/// deleted; signing out and in by token shows the same messages.
@Suite struct HubWebPageTests {
    @Test(.timeLimit(.minutes(10))) func aSenderWritesToABoardFromTheWebPage() async throws {
        let venv = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/venv", "browser"], executable: "/bin/bash")
        try #require(await venv.waitForSlowExit() == 0, "the browser venv: \(venv.stderr)")
        let python = venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let hub = try await HubHarness()
        try await hub.users(["alice", "kitchen"], friends: [("alice", "kitchen")])
        try await hub.start()
        let state = try scratchDirectory("flap-web-hub")
        let config = try hub.flapdConfig(board: "kitchen", extra: """
            boards: [{ drum: standard }]
            zones:
              - { rows: [0, 2], senders: [alice], name_line: true }
              - { rows: [3, 5], senders: "*" }
            """)
        let board = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound", "--state-dir", state])
        defer { board.terminate() }
        #expect(await board.waitForLog("message API connected"), "\(board.stderr)")
        let port = try #require(await board.apiPort())
        // The board's face reaches the hub just after it authenticates.
        var friends: [[String: Any]] = []
        for _ in 0..<2400 where friends.first?["board"] == nil {
            friends = try await hub.request("GET", "/api/v1/friends", as: "alice").json["friends"] as? [[String: Any]] ?? []
            if friends.first?["board"] == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let size = try #require(friends.first?["board"] as? [String: Any], "\(friends)")
        #expect(size["rows"] as? Int == 3 && size["cols"] as? Int == 22 && size["nameLine"] as? Bool == true)

        let link = try await hub.admin(["user", "link", "alice", "--url", hub.url])
        #expect(link.hasPrefix(hub.url + "/#link="))
        let dir = try scratchDirectory("flap-web-hub-shots")
        let check = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/hub-web-check.py", link, hub.tokens["alice"]!, dir],
                                     executable: python)
        #expect(await check.waitForSlowExit() == 0, "\(check.stderr)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any], "\(check.stdout)\n\(check.stderr)")

        #expect(seen["signed-in"] as? String == "alice" && seen["hash-after-link"] as? String == "" && seen["token-kept"] as? Bool == true, "\(seen)")
        #expect(seen["friend-size"] as? String == "3 × 22, your name on top")
        // The preview, module for module, is what the wall shows once the message is displayed.
        let preview = try #require(seen["preview"] as? [String: Any], "\(seen)")
        let cells = try #require(preview["cells"] as? [[String]])
        #expect(preview["title"] as? String == "kitchen — 3 × 22")
        let statuses = try #require(seen["first-statuses"] as? [String])
        #expect(statuses.last == "displayed" && statuses == ["sent", "delivered", "displayed"].filter(statuses.contains), "\(statuses)")
        let wall = try #require(try await http("GET", port: port).json as? [String: Any])["message"] as? [[Int]]
        let top = try #require(wall?.prefix(3).map { $0.map { Glyph(code: $0)!.text } })
        #expect(cells == Array(top), "preview \(cells)\nwall \(top)")
        #expect(cells.first?.joined().trimmingCharacters(in: .whitespaces) == "ALICE", "the name line")
        // What did not fit and what the standard drum lacks are named, as the hub's API has them.
        let api = try await hub.request("POST", "/api/v1/messages/preview", as: "alice",
                                        json: ["recipients": ["kitchen"], "content": "Hello kitchen, see {63} you at the market, today at noon for lunch ok"])
        let expected = try #require((api.json["previews"] as? [[String: Any]])?.first)
        let cut = try #require(expected["cut"] as? [String]), subs = try #require(expected["substitutions"] as? [String])
        #expect(!cut.isEmpty && preview["cut"] as? [String] == cut.map { "Cut (does not fit): " + $0 }, "\(preview)")
        #expect(subs.contains("',' shown as ' '") && subs.contains("'{63}' shown as ' '"), "\(subs)")
        #expect(preview["substitutions"] as? [String] == subs.map { "Shown instead: " + $0 })
        #expect(seen["send-result"] as? String == "sent to kitchen")

        // The scheduled one was stored with the instant chosen (to the second), then deleted.
        let set = try #require(seen["later-set"] as? Double)
        #expect(seen["later-status"] as? String == "scheduled" && seen["later-unlock"] as? Double == set, "\(seen)")
        let laterID = try #require(seen["later-id"] as? String)
        #expect(try await hub.request("GET", "/api/v1/messages/\(laterID)", as: "alice").status == 404, "deleted")
        let firstID = try #require(seen["first-id"] as? String)
        #expect(seen["rows-after-delete"] as? [[String]] == [[firstID, "displayed"]])
        #expect(!board.stdout.contains("SEE YOU LATER"), "the deleted message never showed")

        #expect(seen["signed-out"] as? String == "signed out")
        #expect(seen["token-rows"] as? [[String]] == [[firstID, "displayed"]], "signed in by token: the same messages")
        #expect((seen["link-again"] as? String)?.hasPrefix("this sign-in link is unknown, used or expired") == true, "\(seen)")
        #expect(seen["console-errors"] as? [String] == [], "\(seen["console-errors"] ?? "")")
        #expect(FileManager.default.fileExists(atPath: dir + "/compose.png"))
        #expect(!hub.process!.stderr.contains(hub.tokens["alice"]!) && !hub.process!.stderr.contains(link.components(separatedBy: "=").last!),
                "neither the token nor the link's code is logged")
    }
}
