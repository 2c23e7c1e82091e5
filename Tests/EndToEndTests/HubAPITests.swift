import EndToEndSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// flaphub as a process on loopback: the seed's validation and limits, friends, delivery
/// status, WebSocket events, and data that survives a restart; on each store.
@Suite struct HubAPITests {
    @Test(arguments: HubEngine.allCases) func sendingFollowsTheRules(_ engine: HubEngine) async throws {
        let hub = try await HubHarness(engine: engine)
        try await hub.users(["alice", "bob", "eve", "board"], friends: [("alice", "board"), ("eve", "board")])
        try await hub.start()
        func post(_ body: Any, as user: String = "alice") async throws -> (status: Int, json: [String: Any]) {
            try await hub.request("POST", "/api/v1/messages", as: user, json: body)
        }
        let cases: [(Any, Int, String)] = [
            (["recipients": ["board"], "content": ""], 400, "content is empty"),
            (["recipients": ["board"], "content": String(repeating: "A", count: 133)], 400, "133 characters"),
            (["recipients": ["board"], "content": "snow ☃"], 400, "'☃' at position 6"),
            (["recipients": Array(repeating: "board", count: 11), "content": "hi"], 400, "at most 10"),
            (["recipients": [], "content": "hi"], 400, "non-empty list"),
            (["recipients": ["board"], "content": "hi", "contentType": "video"], 400, "'video' is not text, pattern or vbml"),
            (["recipients": ["board"], "content": "[[1,99]]", "contentType": "pattern"], 400, "99"),
            (["recipients": ["board"], "content": "hi", "unlockAt": "soon"], 400, "unlockAt"),
            (["recipients": ["board"], "content": "hi", "unlockAt": Date().timeIntervalSince1970 + 49 * 3600], 400, "after the message expires"),
            (["recipients": ["bob"], "content": "hi"], 403, "no recipient could take"),
            (["recipients": ["board"], "content": "hi", "duration": 5], 400, "\"duration\" must be 10…43200 seconds"),
            (["recipients": ["board"], "content": "hi", "forced": "yes"], 400, "\"forced\" must be true or false"),
            (["recipients": ["board"], "content": "hi", "transition": ["strategy": "zigzag"]], 400, "transition: strategy"),
            (["recipients": ["board"], "content": "hi", "transition": "wave"], 400, "\"transition\" must be an object"),
        ]
        for (body, status, text) in cases {
            let answer = try await post(body)
            #expect(answer.status == status, "\(body)")
            #expect((answer.json["error"] as? String ?? "").contains(text), "\(answer.json)")
        }
        #expect(try await hub.request("POST", "/api/v1/messages", as: "nobody").status == 401)
        #expect(try await hub.request("GET", "/api/v1/nothing", as: "alice").status == 404)
        // A body that is not JSON, and one over 64 KiB.
        var raw = URLRequest(url: URL(string: hub.url + "/api/v1/messages")!)
        raw.httpMethod = "POST"
        raw.setValue("Bearer \(hub.tokens["alice"]!)", forHTTPHeaderField: "Authorization")
        for body in [Data("{oops".utf8), Data(repeating: 0x20, count: 70_000)] {
            raw.httpBody = body
            let (data, response) = try await URLSession.shared.data(for: raw)
            let status = (response as! HTTPURLResponse).statusCode
            #expect(status == (body.count > 65536 ? 413 : 400))
            #expect((try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] != nil)
        }
        // Per-recipient results: one sent, one refused.
        let mixed = try await post(["recipients": ["board", "bob"], "content": "hello"])
        #expect(mixed.status == 201)
        let results = mixed.json["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["status"] as? String } == ["sent", "refused"])
        #expect(results.last?["error"] as? String == "not a friend")
        // The board blocks eve, who has sent to it before (on PostgreSQL the instance knows the
        // board as her recipient since: the block is seen all the same): refused.
        #expect(try await post(["recipients": ["board"], "content": "before"], as: "eve").status == 201)
        #expect(try await hub.request("POST", "/api/v1/friends/eve/block", as: "board").status == 200)
        let blocked = try await post(["recipients": ["board"], "content": "hi"], as: "eve")
        #expect(blocked.status == 403 && "\(blocked.json)".contains("blocked"))
        // Likewise a friendship that ends after sends: not a friend.
        let board = try #require(try await hub.request("GET", "/api/v1/users/me", as: "board").json["id"] as? String)
        #expect(try await post(["recipients": ["board"], "content": "again"]).status == 201)
        #expect(try await hub.request("DELETE", "/api/v1/friends/\(board)", as: "alice").status / 100 == 2)
        let ended = try await post(["recipients": ["board"], "content": "hi"])
        #expect(ended.status == 403 && "\(ended.json)".contains("not a friend"), "\(ended.json)")
    }

    @Test(arguments: HubEngine.allCases) func fiftyAnHourThen429WithRetryAfter(_ engine: HubEngine) async throws {
        let hub = try await HubHarness(engine: engine)
        try await hub.users(["alice", "board"], friends: [("alice", "board")])
        try await hub.start()
        for i in 0..<50 { _ = try await hub.send("message \(i)", from: "alice", to: "board") }
        var request = URLRequest(url: URL(string: hub.url + "/api/v1/messages")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(hub.tokens["alice"]!)", forHTTPHeaderField: "Authorization")
        request.httpBody = Data(#"{"recipients":["board"],"content":"one too many"}"#.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        #expect(http.statusCode == 429)
        let retry = Int(http.value(forHTTPHeaderField: "Retry-After") ?? "") ?? 0
        #expect(retry > 3000 && retry <= 3600)
        // Latest per sender: the board's inbox holds one message, the 50th.
        let inbox = try await hub.request("GET", "/api/v1/messages/inbox", as: "board").json["messages"] as? [[String: Any]]
        #expect(inbox?.map { $0["content"] as? String } == ["message 49"])
    }

    @Test(arguments: HubEngine.allCases) func friendsByRequestAndDataSurvivesARestart(_ engine: HubEngine) async throws {
        let hub = try await HubHarness(engine: engine)
        try await hub.users(["alice", "board"], friends: [])
        try await hub.start()
        let asked = try await hub.request("POST", "/api/v1/friends/requests", as: "alice", json: ["to": "board"])
        #expect(asked.status == 201)
        let id = try #require(asked.json["id"] as? String)
        #expect(try await hub.request("POST", "/api/v1/friends/requests/\(id)/accept", as: "alice").status == 404)
        let pending = try await hub.request("GET", "/api/v1/friends/requests", as: "board").json["requests"] as? [[String: Any]]
        #expect(pending?.count == 1)
        #expect(try await hub.request("POST", "/api/v1/friends/requests/\(id)/accept", as: "board").status == 200)
        let messageID = try await hub.send("kept", from: "alice", to: "board")
        await hub.stop()
        try await hub.start()
        let friends = try await hub.request("GET", "/api/v1/friends", as: "alice").json["friends"] as? [[String: Any]]
        #expect(friends?.map { $0["username"] as? String } == ["board"])
        let got = try await hub.request("GET", "/api/v1/messages/from/alice", as: "board")
        #expect(got.json["id"] as? String == messageID && got.json["content"] as? String == "kept")
        #expect(try await hub.request("GET", "/api/v1/messages/\(messageID)", as: "alice").json["status"] as? String == "delivered")
    }

    @Test(.timeLimit(.minutes(10)), arguments: HubEngine.allCases) func webSocketEvents(_ engine: HubEngine) async throws {
        let hub = try await HubHarness(engine: engine)
        try await hub.users(["alice", "board"], friends: [("alice", "board")])
        try await hub.start()
        // The board answers its `authenticated` with a frame that is not JSON and a ping, and
        // shows every message, reporting it twice and then pinging (as flapd does when the
        // connection it reported on ended before a pong); alice's socket hears about delivery and
        // display, once.
        let board = try #require(await SocketWatch.authenticated(port: hub.port, token: hub.tokens["board"]!) { frame in
            let shown = SocketWatch.displaysEveryMessage(frame)
            return (SocketWatch.isAuthenticated(frame) ? ["not json", #"{"type":"ping"}"#] : [])
                + shown + shown + (shown.isEmpty ? [] : [#"{"type":"ping"}"#])
        }, "\(hub.process?.stderr ?? "")")
        defer { board.stop() }
        let alice = try #require(await SocketWatch.authenticated(port: hub.port, token: hub.tokens["alice"]!))
        defer { alice.stop() }
        #expect(await board.wait { $0.contains(#"{"type":"pong"}"#) }, "\(board.frames)")
        #expect(await board.wait { $0.hasPrefix(#"{"code":"bad_frame""#) }, "\(board.frames)")
        let id = try await hub.send("over the socket", from: "alice", to: "board")
        #expect(await alice.wait { $0.contains(#""type":"message.delivered""#) && $0.contains(id) }, "\(alice.frames)")
        #expect(await alice.wait { $0.contains(#""type":"message.displayed""#) && $0.contains(id) }, "\(alice.frames)")
        #expect(try await hub.request("GET", "/api/v1/messages/\(id)", as: "alice").json["status"] as? String == "displayed")
        // Both reports were taken up once the board has the pong after them; what alice hears
        // after a later message's delivery was published after them.
        #expect(await board.wait { _ in board.frames.filter { $0 == #"{"type":"pong"}"# }.count >= 2 }, "\(board.frames)")
        let later = try await hub.send("later", from: "alice", to: "board")
        #expect(await alice.wait { $0.contains(#""type":"message.delivered""#) && $0.contains(later) }, "\(alice.frames)")
        #expect(alice.frames.filter { $0.contains(#""type":"message.displayed""#) && $0.contains(id) }.count == 1, "\(alice.frames)")
        #expect(board.frames.contains { $0.contains("\"content\":\"over the socket\"") })
        #expect(try await hub.request("DELETE", "/api/v1/messages/\(id)", as: "alice").status == 204)
        #expect(await board.wait { $0.contains(#"{"messageID":"\#(id)","type":"message.deleted"}"#) }, "\(board.frames)")
    }
}
