import EndToEndSupport
import Foundation
import Testing
import TestWaits
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18, from outside: what an attacker on the network found against flapd and flaphub,
/// replayed against the real processes over loopback.
@Suite struct HostileInputTests {
    /// Sends `bytes` on a new connection and reads until the server closes it (or 60 s pass,
    /// then the answer is whatever came). Runs on a thread of its own.
    static func exchange(port: Int, _ bytes: [UInt8], thenWaitForClose: Bool = true) async -> String {
        String(decoding: await exchangeBytes(port: port, bytes), as: UTF8.self)
    }

    /// `exchange`, the answer as bytes (`<no close>` appended when the server did not close).
    /// With `then`, its bytes are sent once the answer holds its text; with `halfClose`, the
    /// client's half is shut after the last bytes sent (a FIN, no close frame).
    static func exchangeBytes(port: Int, _ bytes: [UInt8], then: (after: String, bytes: [UInt8])? = nil,
                              halfClose: Bool = false) async -> [UInt8] {
        await withCheckedContinuation { c in
            Thread {
                guard let fd = loopbackConnection(port: port) else { c.resume(returning: Array("<connect failed>".utf8)); return }
                defer { close(fd) }
                func send(_ bytes: [UInt8], last: Bool) {
                    _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if last, halfClose { shutdown(fd, Int32(SHUT_WR)) }
                }
                send(bytes, last: then == nil)
                var answer: [UInt8] = [], pending = then
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = recv(fd, &buffer, buffer.count, 0)
                    // A reset counts as closed (the server closes with the client's bytes unread); a timeout does not.
                    if n <= 0 { if n < 0, errno == EAGAIN || errno == EWOULDBLOCK { answer += Array("<no close>".utf8) }; break }
                    answer += buffer[..<n]
                    if let next = pending, String(decoding: answer, as: UTF8.self).contains(next.after) {
                        send(next.bytes, last: true)
                        pending = nil
                    }
                }
                c.resume(returning: answer)
            }.start()
        }
    }

    /// What the attack on flaphub found unanswered (41 cases in the report; their kinds here).
    static let malformed: [(String, [UInt8], String)] = [
        ("garbage", Array("GARBAGE\r\n\r\n".utf8), "HTTP/1.1 400"),
        ("unknown method", Array("FROB /api/v1/users/me HTTP/1.1\r\nHost: x\r\n\r\n".utf8), "HTTP/1.1 400"),
        ("header without colon", Array("GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\nbad header\r\n\r\n".utf8), "HTTP/1.1 400"),
        ("Content-Length abc", Array("POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".utf8), "HTTP/1.1 400"),
        ("HTTP/2 preface", Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8), "HTTP/1.1 400"),
        ("space in path", Array("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n".utf8), "HTTP/1.1 400"),
        ("100 KiB header", Array(("GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 100 * 1024) + "\r\n\r\n").utf8), "HTTP/1.1 431"),
        ("1000 headers", Array(("GET / HTTP/1.1\r\nHost: x\r\n" + (0..<1000).map { "X\($0): a\r\n" }.joined() + "\r\n").utf8), "HTTP/1.1 431"),
        ("a head that never ends", Array("GET /api/v1/users/me HTTP/1.1\r\nHo".utf8), "HTTP/1.1 408"),
    ]

    @Test(.timeLimit(.minutes(3))) func flaphubAnswersAndClosesWhatItCannotParse() async throws {
        let hub = try await HubHarness()
        try await hub.users(["alice", "wall"], friends: [("alice", "wall")])
        try await hub.start()
        for (name, bytes, expected) in Self.malformed {
            let answer = await Self.exchange(port: hub.port, bytes)
            #expect(answer.hasPrefix(expected) && !answer.hasSuffix("<no close>"), "\(name): \(answer.prefix(200))")
        }
        // A body sent too slowly (here: never finished) is cut off.
        let slowBody = "POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(hub.tokens["alice"]!)\r\n"
            + "Content-Length: 100\r\n\r\n{\"re"
        let slow = await Self.exchange(port: hub.port, Array(slowBody.utf8))
        #expect(slow.hasPrefix("HTTP/1.1 408") && !slow.hasSuffix("<no close>"), "\(slow.prefix(200))")
        // An id cut at a NUL is no id: nobody gets the message.
        let nul = try await hub.request("POST", "/api/v1/messages", as: "alice", json: ["recipients": ["wall\u{0}evil"], "content": "hi"])
        #expect(nul.status == 403 && "\(nul.json)".contains("no such user"), "\(nul)")
        let five = try await hub.request("POST", "/api/v1/messages", as: "alice", json: ["recipients": ["wall"], "content": "hi", "contentType": 5])
        #expect(five.status == 400 && "\(five.json)".contains("contentType"), "\(five)")
        // Lenient JSON and deep nesting are named.
        for (body, text) in [(#"{"recipients":["wall"],"content":"hi",}"#, "trailing comma"),
                             (String(repeating: "[", count: 513), "nested deeper than 8")] {
            let request = "POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(hub.tokens["alice"]!)\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
            let answer = await Self.exchange(port: hub.port, Array(request.utf8))
            #expect(answer.hasPrefix("HTTP/1.1 400") && answer.contains(text), "\(answer.prefix(300))")
        }
        // Still serving.
        #expect(try await hub.request("GET", "/api/v1/users/me", as: "alice").status == 200)
    }

    /// A running flaphub with one user, "wall".
    static func wallsHub() async throws -> HubHarness {
        let hub = try await HubHarness()
        try await hub.users(["wall"], friends: [])
        try await hub.start()
        return hub
    }

    /// A WebSocket upgrade of `/ws`, as a client sends it.
    static let upgrade = Array(("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)

    /// "wall"'s `authenticate` frame's text.
    static func authenticate(_ hub: HubHarness) -> [UInt8] { Array(#"{"type":"authenticate","token":"\#(hub.tokens["wall"]!)"}"#.utf8) }

    @Test(.timeLimit(.minutes(3))) func flaphubClosesAWebSocketOnAnUnmaskedFrame() async throws {
        let hub = try await Self.wallsHub()
        let text = Array(#"{"type":"ping"}"#.utf8)
        let unmasked: [UInt8] = [0x81, UInt8(text.count)] + text
        let answer = await Self.exchange(port: hub.port, Self.upgrade + unmasked)
        #expect(answer.hasPrefix("HTTP/1.1 101"), "\(answer.prefix(200))")
        #expect(answer.contains("unmasked client frame") && !answer.hasSuffix("<no close>"), "\(answer)")
    }

    /// A client frame as a browser sends it: masked (with a fixed key, which is allowed).
    static func masked(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        let key: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        default: frame += [0x80 | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xff) }
        }
        return frame + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// The WebSocket's limits (README, Limits and security): a frame or a message of fragments
    /// over 64 KiB is closed with 1009; no authentication within 10 s closes it with 1008; a bad
    /// token is told `unauthorized` and closed; a ping is answered with a pong, a close with a close.
    @Test(.timeLimit(.minutes(3))) func flaphubWebSocketKeepsItsLimits() async throws {
        let hub = try await Self.wallsHub()
        let handshake = Self.upgrade
        func closes(with code: UInt16, _ answer: [UInt8]) -> Bool {
            let tail: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xff)]
            return answer.indices.contains { i in answer[i] == 0x88 && i + 3 < answer.count && Array(answer[(i + 2)...(i + 3)]) == tail }
                && !String(decoding: answer, as: UTF8.self).hasSuffix("<no close>")
        }
        let authenticate = Self.authenticate(hub)
        let big = [UInt8](repeating: 0x61, count: 64 * 1024 + 1)
        let oneFrame = await Self.exchangeBytes(port: hub.port, handshake + Self.masked(0x1, authenticate) + Self.masked(0x1, big))
        #expect(closes(with: 1009, oneFrame), "a frame over 64 KiB: \(String(decoding: oneFrame.suffix(200), as: UTF8.self))")
        let half = [UInt8](repeating: 0x61, count: 40 * 1024)
        let fragments = await Self.exchangeBytes(port: hub.port, handshake + Self.masked(0x1, authenticate)
                                                 + Self.masked(0x1, half, fin: false) + Self.masked(0x0, half))
        #expect(closes(with: 1009, fragments), "a message of fragments over 64 KiB: \(String(decoding: fragments.suffix(200), as: UTF8.self))")
        let silent = await Self.exchangeBytes(port: hub.port, handshake)
        #expect(closes(with: 1008, silent) && String(decoding: silent, as: UTF8.self).contains("authenticate first"),
                "no authentication: \(String(decoding: silent.suffix(200), as: UTF8.self))")
        #expect(await hub.process!.waitUntil { _, e in e.contains("socket closed: no authenticate frame within 10 s") }, "the hub says why it closed the socket")
        let stranger = await Self.exchangeBytes(port: hub.port, handshake + Self.masked(0x1, Array(#"{"type":"authenticate","token":"nope"}"#.utf8)))
        #expect(String(decoding: stranger, as: UTF8.self).contains("unauthorized") && closes(with: 1000, stranger),
                "a bad token: \(String(decoding: stranger.suffix(200), as: UTF8.self))")
        // Authenticated: a ping (opcode 9) answered by a pong (opcode 10) with its data, the JSON
        // ping by the JSON pong — flapd's bytes (answered without parsing) and another spelling
        // (parsed) — then a close (1000) answered with a close and the end.
        let polite = await Self.exchangeBytes(port: hub.port, handshake + Self.masked(0x1, authenticate) + Self.masked(0x9, Array("hey".utf8))
                                              + Self.masked(0x1, Array(#"{"type":"ping"}"#.utf8)) + Self.masked(0x1, Array(#"{ "type" : "ping" }"#.utf8))
                                              + Self.masked(0x1, Array(#"{"type":"ping"} "#.utf8)) + Self.masked(0x8, [0x03, 0xe8]))
        let text = String(decoding: polite, as: UTF8.self)
        #expect(text.contains("\"authenticated\"") && polite.indices.contains { polite[$0] == 0x8a && polite[$0 + 1] == 3 }
                && text.contains("hey") && text.components(separatedBy: #""type":"pong""#).count == 4 && closes(with: 1000, polite), "\(text.suffix(300))")
    }

    /// The server's ends of its established connections on `port` (/proc/net/tcp): the kernel's
    /// timer on each (2: keepalive) and the seconds until it fires.
    static func serverTimers(port: Int) -> [(kind: Int, seconds: Double)] {
        // Read to its end: String(contentsOfFile:) stops after the first read, 4,050 bytes of it.
        let table = String(decoding: (try? FileHandle(forReadingAtPath: "/proc/net/tcp")?.readToEnd()) ?? Data(), as: UTF8.self)
        let local = String(format: ":%04X", port), ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let field = line.split(separator: " ")
            guard field.count > 5, field[1].hasSuffix(local), field[3] == "01" else { return nil }
            let timer = field[5].split(separator: ":")
            guard timer.count == 2, let kind = Int(timer[0], radix: 16), let when = Int(timer[1], radix: 16) else { return nil }
            return (kind, Double(when) / ticks)
        }
    }

    /// A client gone without a close frame is let go (README, Limits and security): one that
    /// shuts its half after a ping is answered, then closed — not kept open, counting against its
    /// address, until the hub stops; one gone without a word (a power cut) is left to the
    /// kernel's keepalive, whose timer runs on every connection (60 s, then probes).
    @Test(.timeLimit(.minutes(3))) func flaphubLetsGoOfAClientThatIsGone() async throws {
        let hub = try await Self.wallsHub()
        let handshake = Self.upgrade
        let authenticate = Self.authenticate(hub)
        let gone = String(decoding: await Self.exchangeBytes(port: hub.port, handshake + Self.masked(0x1, authenticate),
                                                             then: ("\"authenticated\"", Self.masked(0x1, Array(#"{"type":"ping"}"#.utf8))),
                                                             halfClose: true), as: UTF8.self)
        #expect(gone.contains(#""type":"pong""#) && !gone.hasSuffix("<no close>"), "\(gone.suffix(300))")
        async let silent = Self.exchangeBytes(port: hub.port, handshake)
        #expect(await eventually(within: 60) { Self.serverTimers(port: hub.port).contains { $0.kind == 2 } }, "a keepalive timer on the hub's end")
        let timers = Self.serverTimers(port: hub.port)
        #expect(!timers.isEmpty && timers.allSatisfy { $0.kind == 2 && $0.seconds <= 60 }, "\(timers)")
        _ = await silent
    }

    @Test(.timeLimit(.minutes(3))) func flapdSurvivesTheBodiesThatKilledItAndNamesTheLimit() async throws {
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0"])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        let bodies = [String(repeating: "[", count: 513), " " + String(repeating: "[", count: 513),
                      #"{"text":"# + String(repeating: "[", count: 512), #"{"characters":"# + String(repeating: "[", count: 512),
                      String(repeating: #"[{"a":"#, count: 256) + "[", #"{"text": "x",}"#, "[[1,2,],]", "[[1e-400]]"]
        for body in bodies {
            let answer = try await http("POST", port: port, body: Data(body.utf8))
            #expect(answer.status == 400, "\(body.prefix(40))")
        }
        for (name, bytes, expected) in Self.malformed {
            let answer = await Self.exchange(port: port, bytes)
            #expect(answer.hasPrefix(expected) && !answer.hasSuffix("<no close>"), "\(name): \(answer.prefix(200))")
        }
        let slow = await Self.exchange(port: port, Array("POST /local-api/message HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"te".utf8))
        #expect(slow.hasPrefix("HTTP/1.1 408") && !slow.hasSuffix("<no close>"), "\(slow.prefix(200))")
        let hostless = await Self.exchange(port: port, Array("GET /status HTTP/1.1\r\n\r\n".utf8))
        #expect(hostless.hasPrefix("HTTP/1.1 400") && hostless.contains("Host"), "\(hostless)")
        #expect(try await http("GET", port: port).status == 200)
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0, "\(flapd.stderr)")
    }

    @Test func flapdRefusesToListenBeyondLoopbackWithoutAKey() async throws {
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--bind", "0.0.0.0"])
        #expect(await flapd.waitForExit() != 0)
        #expect(flapd.stderr.contains("0.0.0.0 is reachable from other machines: set local_api.key"), "\(flapd.stderr)")
    }
}
