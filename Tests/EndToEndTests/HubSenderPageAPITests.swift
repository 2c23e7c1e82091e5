import EndToEndSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The doors the sender's page added to flaphub, on each store: the page itself, sign-in links
/// and sessions, previews, and a board's `board.face` — each refusing what it should, by name.
@Suite struct HubSenderPageAPITests {
    @Test(.timeLimit(.minutes(3)), arguments: HubEngine.allCases) func theSenderPagesDoors(_ engine: HubEngine) async throws {
        let hub = try await HubHarness(engine: engine)
        try await hub.users(["alice", "board", "carol"], friends: [("alice", "board")])
        try await hub.start()

        let (page, response) = try await URLSession.shared.data(from: URL(string: hub.url + "/")!)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200 && http.value(forHTTPHeaderField: "Content-Type") == "text/html; charset=utf-8")
        #expect(http.value(forHTTPHeaderField: "Content-Security-Policy")?.hasPrefix("default-src 'self'") == true)
        #expect(String(decoding: page, as: UTF8.self).contains("<script src=\"app.js\">"))
        // HEAD (a monitor, `curl -I`): the same head, its length the page's, no body (was 404).
        var head = URLRequest(url: URL(string: hub.url + "/")!)
        head.httpMethod = "HEAD"
        let (none, headResponse) = try await URLSession.shared.data(for: head)
        let headHTTP = try #require(headResponse as? HTTPURLResponse)
        #expect(headHTTP.statusCode == 200 && headHTTP.value(forHTTPHeaderField: "Content-Length") == "\(page.count)" && none.isEmpty)
        #expect(headHTTP.value(forHTTPHeaderField: "Content-Type") == "text/html; charset=utf-8")

        // Sign-in links: named errors; once; a session ends when signed out.
        for body: [String: Any] in [[:], ["link": 5], ["link": String(repeating: "a", count: 129)]] {
            let r = try await hub.request("POST", "/api/v1/sessions", as: "nobody", json: body)
            #expect(r.status == 400 && r.json["error"] as? String == "\"link\" must be the code of a sign-in link", "\(body)")
        }
        #expect(try await hub.request("POST", "/api/v1/sessions", as: "nobody", json: ["link": "nope"]).status == 401)
        let link = try await hub.admin(["user", "link", "alice", "--url", hub.url + "/", "--minutes", "5"])
        let code = try #require(link.split(separator: "=").last.map(String.init))
        #expect(link == hub.url + "/#link=" + code)
        let opened = try await hub.request("POST", "/api/v1/sessions", as: "nobody", json: ["link": code])
        let session = try #require(opened.json["token"] as? String, "\(opened)")
        #expect(opened.status == 201 && (opened.json["user"] as? [String: Any])?["username"] as? String == "alice")
        let again = try await hub.request("POST", "/api/v1/sessions", as: "nobody", json: ["link": code])
        #expect(again.status == 401 && (again.json["error"] as? String)?.hasPrefix("this sign-in link is unknown, used or expired") == true)
        #expect(try await hub.request("GET", "/api/v1/users/me", as: session).json["username"] as? String == "alice")
        #expect(try await hub.request("DELETE", "/api/v1/sessions/current", as: session).status == 204)
        #expect(try await hub.request("GET", "/api/v1/users/me", as: session).status == 401)
        let refused = try FlapdProcess(["user", "link", "alice", "--minutes", "0", "--database", hub.database], executable: HubHarness.executable)
        #expect(await refused.waitForExit() != 0 && refused.stderr.contains("--minutes must be 1–10080, not 0"))

        // Previews: a friend's board that never said is flapd's default; others are named.
        let preview = try await hub.request("POST", "/api/v1/messages/preview", as: "alice",
                                            json: ["recipients": ["board", "carol", "nobody"], "content": "hello"])
        let previews = try #require(preview.json["previews"] as? [[String: Any]], "\(preview)")
        #expect(previews.map { $0["recipient"] as? String } == ["board", "carol", "nobody"])
        #expect(previews[0]["reported"] as? Bool == false && previews[0]["rows"] as? Int == 6 && previews[0]["cols"] as? Int == 22)
        #expect((previews[0]["cells"] as? [[String]])?[2].joined().trimmingCharacters(in: .whitespaces) == "HELLO")
        #expect(previews[1]["problem"] as? String == "not a friend" && previews[2]["problem"] as? String == "not a friend")
        let long = try await hub.request("POST", "/api/v1/messages/preview", as: "alice",
                                         json: ["recipients": ["board"], "content": String(repeating: "A", count: 200)])
        #expect(long.status == 400, "the send's rules: \(long)")
        #expect(try await hub.request("GET", "/api/v1/messages/sent", as: "alice").json["messages"] as? [Any] != nil)

        // A board's face: a wrong one is refused by name and not kept; a right one is.
        let frames = try await face(hub, [
            #"{"type":"board.face","face":{"areas":[{"rows":0,"cols":22,"nameLine":false,"horizontal":"center","vertical":"center","drum":[0],"substitutes":{},"fallback":0}]}}"#,
            #"{"type":"board.face","face":{"areas":[{"senders":["alice"],"rows":2,"cols":15,"nameLine":true,"horizontal":"center","vertical":"center","drum":[0,1,2],"substitutes":{},"fallback":0}]}}"#,
        ])
        #expect(frames.contains { $0.contains("board.face: area 1: rows and cols must be 1–128, 8192 modules at most") }, "\(frames)")
        let friends = try await hub.request("GET", "/api/v1/friends", as: "alice").json["friends"] as? [[String: Any]]
        let board = try #require(friends?.first?["board"] as? [String: Any], "\(String(describing: friends))")
        #expect(board["rows"] as? Int == 2 && board["cols"] as? Int == 15 && board["nameLine"] as? Bool == true)
        await hub.stop()
    }

    /// Sends frames as the board once authenticated, then a ping; returns what the hub said until
    /// its pong (frames are taken in order, so what they did is done by then).
    func face(_ hub: HubHarness, _ frames: [String]) async throws -> [String] {
        let socket = try #require(await SocketWatch.authenticated(port: hub.port, token: hub.tokens["board"]!) { frame in
            SocketWatch.isAuthenticated(frame) ? frames + [#"{"type":"ping"}"#] : []
        }, "\(hub.process?.stderr ?? "")")
        defer { socket.stop() }
        #expect(await socket.wait { $0.contains("\"pong\"") }, "\(socket.frames)")
        return socket.frames
    }
}
