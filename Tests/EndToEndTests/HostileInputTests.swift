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
        await withCheckedContinuation { c in
            Thread {
                guard let fd = loopbackConnection(port: port) else { c.resume(returning: "<connect failed>"); return }
                defer { close(fd) }
                _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                var answer: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = recv(fd, &buffer, buffer.count, 0)
                    // A reset counts as closed (the server closes with the client's bytes unread); a timeout does not.
                    if n <= 0 { if n < 0, errno == EAGAIN || errno == EWOULDBLOCK { answer += Array("<no close>".utf8) }; break }
                    answer += buffer[..<n]
                }
                c.resume(returning: String(decoding: answer, as: UTF8.self))
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

    @Test(.timeLimit(.minutes(3))) func flaphubClosesAWebSocketOnAnUnmaskedFrame() async throws {
        let hub = try await HubHarness()
        try await hub.users(["wall"], friends: [])
        try await hub.start()
        let handshake = "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let text = Array(#"{"type":"ping"}"#.utf8)
        let unmasked: [UInt8] = [0x81, UInt8(text.count)] + text
        let answer = await Self.exchange(port: hub.port, Array(handshake.utf8) + unmasked)
        #expect(answer.hasPrefix("HTTP/1.1 101"), "\(answer.prefix(200))")
        #expect(answer.contains("unmasked client frame") && !answer.hasSuffix("<no close>"), "\(answer)")
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
