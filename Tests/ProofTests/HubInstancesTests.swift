import EndToEndSupport
import Foundation
import PostgresTesting
import Synchronization
import Testing
import TestWaits
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Several flaphub instances on one PostgreSQL database: events cross instances once, the rate
/// limit is one, a killed instance or database loses no accepted message.
@Suite(.serialized) struct HubInstancesTests {
    @Test(.timeLimit(.minutes(20))) func eventsCrossInstancesOnceAndTheLimitIsOne() async throws {
        let a = try await HubHarness(config: "messages_per_hour: 12", engine: .postgres)
        try await a.users(["alice", "carol", "board"], friends: [("alice", "board"), ("carol", "board")])
        let b = try HubHarness(sharing: a)
        try await a.start()
        try await b.start()
        // The board has a socket on each instance; alice hers on B.
        let boardOnA = try #require(await SocketWatch.authenticated(port: a.port, token: a.tokens["board"]!, replies: SocketWatch.displaysEveryMessage))
        defer { boardOnA.stop() }
        let boardOnB = try #require(await SocketWatch.authenticated(port: b.port, token: a.tokens["board"]!))
        defer { boardOnB.stop() }
        let alice = try #require(await SocketWatch.authenticated(port: b.port, token: a.tokens["alice"]!))
        defer { alice.stop() }

        let first = try await a.send("across", from: "alice", to: "board")
        #expect(await boardOnB.wait { $0.contains("\"messageID\":\"\(first)\"") && $0.contains("message.new") })
        #expect(await alice.wait { $0.contains("message.displayed") && $0.contains(first) })
        // A second message, sent on B, settles everything the first could still cause.
        let second = try await b.send("again", from: "alice", to: "board")
        #expect(await alice.wait { $0.contains("message.displayed") && $0.contains(second) })
        func count(_ s: SocketWatch, _ type: String, _ id: String) -> Int { s.frames.filter { $0.contains(type) && $0.contains(id) }.count }
        #expect(count(boardOnA, "message.new", first) == 1 && count(boardOnB, "message.new", first) == 1)
        #expect(count(alice, "message.delivered", first) == 1, "\(alice.frames)")
        #expect(count(alice, "message.displayed", first) == 1)
        for hub in [a, b] {
            #expect(try await hub.request("GET", "/api/v1/messages/\(first)", as: "alice").json["status"] as? String == "displayed")
        }

        // 30 sends of carol at once, every other one to each instance: 12 an hour, in all.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<30 {
                let hub = i % 2 == 0 ? a : b
                group.addTask { try await hub.request("POST", "/api/v1/messages", as: "carol", json: ["recipients": ["board"], "content": "race \(i)"]).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 12 && statuses.filter { $0 == 429 }.count == 18, "\(statuses)")
    }

    /// Boards reach two instances through nginx (the README's example); the one that holds the
    /// board's socket is killed while messages flow. The board reconnects to the other and ends
    /// on the last message accepted.
    @Test(.timeLimit(.minutes(20))) func aKilledInstanceLosesNothing() async throws {
        let a = try await HubHarness(engine: .postgres)
        try await a.users(["alice", "board"], friends: [("alice", "board")])
        let b = try HubHarness(sharing: a)
        try await a.start()
        try await b.start()
        let nginx = try await NginxProxy(upstreams: [a.port, b.port])
        let state = try scratchDirectory("flap-pg")
        let board = try FlapdProcess(["run", "--config", try a.flapdConfig(board: "board", url: nginx.url), "--plain", "--no-sound", "--state-dir", state])
        defer { board.terminate() }
        #expect(await board.waitForLog("message API connected"), "\(board.stderr)")
        let holder = [a, b].first { $0.process?.stderr.contains("socket authenticated") == true }
        let other = try #require(holder === a ? b : a)
        let proxied = try HubHarness(sharing: a, url: nginx.url)
        var accepted: [String] = []
        for i in 1...24 {
            if i == 9, let p = holder?.process { kill(p.pid, SIGKILL); _ = await p.waitForExit() }
            // A sender retries what was not accepted (502: the instance went with the request).
            for _ in 0..<200 {
                let answer = try? await proxied.request("POST", "/api/v1/messages", as: "alice", json: ["recipients": ["board"], "content": "message \(i)"])
                if answer?.status == 201 { accepted.append("message \(i)"); break }
            }
        }
        #expect(accepted.count == 24)
        #expect(await board.waitForFrame { words($0) == ["MESSAGE 24"] }, "\(board.stdout.suffix(2000))\n\(board.stderr)")
        #expect(board.stderr.components(separatedBy: "message API connected").count - 1 >= 2)
        #expect(other.process?.stderr.contains("socket authenticated") == true)
    }

    /// The database stops at once (as in a crash) while messages are sent, then comes back: the
    /// hub answers 503 with Retry-After meanwhile, never 500, never exits, and the board ends on
    /// the last message.
    @Test(.timeLimit(.minutes(6))) func aKilledDatabaseLosesNothing() async throws {
        let server = try await offPool { Result { try PostgresServer() } }.get()  // initdb and pg_ctl: off the pool
        let hub = try await HubHarness(engine: .postgres, postgres: server, wait: 5)  // the 503 within 5 s is what is tested
        try await hub.users(["alice", "board"], friends: [("alice", "board")])
        try await hub.start()
        let state = try scratchDirectory("flap-pg")
        let board = try FlapdProcess(["run", "--config", try hub.flapdConfig(board: "board"), "--plain", "--no-sound", "--state-dir", state])
        defer { board.terminate() }
        #expect(await board.waitForLog("message API connected"))
        var answers: [Answer] = []
        let token = hub.tokens["alice"]!
        func send(_ content: String) async throws { try await Self.send(content, to: hub.url, token: token) { answers.append($0) } }
        for i in 1...4 { try await send("message \(i)") }
        await offPool { server.stop(mode: "immediate") }
        let down = try await hub.request("POST", "/api/v1/messages", as: "alice", json: ["recipients": ["board"], "content": "while down"])
        #expect(down.status == 503, "\(down)")
        try await offPool { Result { try server.start() } }.get()
        for i in 5...12 { try await send("message \(i)") }
        let unavailable = answers.filter { $0.status == 503 }
        #expect(Set(answers.map(\.status)).isSubset(of: [201, 503]), "\(answers.map { "\($0.status) \($0.body)" })\n\(hub.process?.stderr ?? "")")
        #expect(answers.filter { $0.status == 201 }.count == 12)
        #expect(unavailable.allSatisfy { $0.retryAfter == "1" && $0.body.contains("the database is unavailable") },
                "\(unavailable.map { "\($0.retryAfter ?? "none") \($0.body)" })")
        #expect(await board.waitForFrame { words($0) == ["MESSAGE 12"] }, "\(board.stdout.suffix(2000))\n\(board.stderr)")
        #expect(hub.process?.stderr.contains("lost the event channel") == true)
        #expect(kill(hub.process!.pid, 0) == 0, "the hub is still running")
    }
}

extension HubInstancesTests {
    /// One answer to a send, as a client saw it.
    struct Answer: Sendable {
        let status: Int
        let retryAfter: String?
        let body: String
        let seconds: Double
    }

    /// Sends `content` to the user "board" as a client does: again after a 503's `Retry-After`
    /// (the client's part of the protocol, not a synchronisation), until another answer, at most
    /// `tries` times; each answer to `seen`.
    static func send(_ content: String, to url: String, token: String, tries: Int = 200, seen: (Answer) -> Void) async throws {
        for _ in 0..<tries {
            var request = URLRequest(url: URL(string: url + "/api/v1/messages")!)
            request.httpMethod = "POST"
            request.timeoutInterval = 120
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            request.httpBody = try JSONSerialization.data(withJSONObject: ["recipients": ["board"], "content": content])
            let began = Date()
            let (data, response) = try await URLSession.shared.data(for: request)
            let http = response as! HTTPURLResponse
            let answer = Answer(status: http.statusCode, retryAfter: http.value(forHTTPHeaderField: "Retry-After"),
                                body: String(decoding: data, as: UTF8.self), seconds: Date().timeIntervalSince(began))
            seen(answer)
            guard http.statusCode == 503 else { return }
            try await Task.sleep(for: .seconds(Int(answer.retryAfter ?? "1") ?? 1))
        }
    }

    /// Issue 37, item 5: PostgreSQL stops (`pg_ctl stop -m fast`: every session ended) while
    /// eight senders keep sends in flight on two instances. Every answer is 201, or 503 with
    /// `Retry-After: 1` — whatever state its statement or transaction was in, it is answered
    /// within the address's `wait` (5 s here), never left to the front door's 408 at 10 s (as it
    /// was: a statement whose connection went away waited for the pool, and the deadline's task
    /// group waited for it). Then the database comes back, and every message is stored.
    @Test(.timeLimit(.minutes(6))) func aDatabaseStoppedUnderABurstIsAnswered503ByBothInstances() async throws {
        let server = try await offPool { Result { try PostgresServer() } }.get()
        let a = try await HubHarness(config: "messages_per_hour: 10000", engine: .postgres, postgres: server, wait: 5)
        try await a.users(["alice", "board"], friends: [("alice", "board")])
        let b = try HubHarness(sharing: a)
        try await a.start()
        try await b.start()
        final class Answers: Sendable { let all = Mutex<[Answer]>([]) }
        let answers = Answers()
        let (token, urls) = (a.tokens["alice"]!, [a.url, b.url])
        @Sendable func send(_ content: String, to url: String) async throws {
            try await Self.send(content, to: url, token: token) { answer in answers.all.withLock { $0.append(answer) } }
        }
        let count = { @Sendable (status: Int) in answers.all.withLock { $0.filter { $0.status == status }.count } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask { for k in 0..<10 { try await send("burst \(worker) \(k)", to: urls[worker % 2]) } }
            }
            // Sends are flowing: the database stops under them, and comes back once both
            // instances have answered 503.
            #expect(await eventually { count(201) >= 8 })
            await offPool { server.stop(mode: "fast") }
            #expect(await eventually { count(503) >= 4 }, "\(answers.all.withLock { $0.map(\.status) })")
            try await offPool { Result { try server.start() } }.get()
            try await group.waitForAll()
        }
        let all = answers.all.withLock { $0 }
        let unavailable = all.filter { $0.status == 503 }
        print("burst: \(all.count) answers, \(count(201)) accepted, \(unavailable.count) 503s, the longest 503 after "
              + String(format: "%.2f s", unavailable.map(\.seconds).max() ?? 0))
        #expect(Set(all.map(\.status)).isSubset(of: [201, 503]), "\(all.filter { $0.status != 201 && $0.status != 503 }.map { "\($0.status) \($0.body)" })\n\(a.process?.stderr.suffix(3000) ?? "")\n\(b.process?.stderr.suffix(3000) ?? "")")
        #expect(unavailable.allSatisfy { $0.retryAfter == "1" && $0.body.contains("the database is unavailable") },
                "\(unavailable.map { "\($0.retryAfter ?? "none") \($0.body)" })")
        #expect(count(201) == 80)
        // Nothing lost: every message is stored (a 503 whose COMMIT had landed is stored twice: counted).
        let stored = try await offPool { Result { try server.psql("SELECT count(DISTINCT content), count(*) FROM messages WHERE content LIKE 'burst %'",
                                                                   database: a.databaseName) } }.get()
        print("burst: stored (distinct, all): \(stored.trimmingCharacters(in: .whitespacesAndNewlines))")
        #expect(stored.hasPrefix("80|"), "\(stored)")
        for hub in [a, b] { #expect(kill(hub.process!.pid, 0) == 0, "the hub is still running") }
    }
}
