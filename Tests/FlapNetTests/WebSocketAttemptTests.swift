#if canImport(Glibc)
import Glibc
#endif
import FlapWiring
import Foundation
import Logging
import Testing
import TestWaits
@testable import FlapNet

/// A stop or a late upgrade ends a connection attempt wherever it is, and the client with it.
@Suite struct WebSocketAttemptTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A TCP listener on loopback that never accepts: the kernel completes the handshake, and
    /// the upgrade request waits unanswered. Closed by `close(fd)`.
    static func silentListener() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test(.timeLimit(.minutes(3))) func aStopAtAnyPointOfAConnectEndsTheClient() async throws {
        // A port nothing listens on: each attempt is refused at once, so the stops below land
        // before, during and after the connect of the client's first attempt. (Before the
        // attempt closed its own channel it shut its event loop down, and a stop there left the
        // client suspended for ever: 4 flapd stops of 40.)
        let (fd, port) = try Self.silentListener()
        close(fd)
        var config = MessageAPIConfig(url: "http://127.0.0.1:\(port)", token: "t")
        config.pingSeconds = 2
        for i in 0..<150 {
            let client = MessageAPIClient(config: config, logger: Self.quiet, random: { 0.5 }) { _ in }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                try await Task.sleep(for: .microseconds(i * 50))
                group.cancelAll()
                try await group.waitForAll()
            }
        }
    }

    @Test(.timeLimit(.minutes(2))) func anUpgradeNeverAnsweredIsEndedByClosingItsChannel() async throws {
        let (fd, port) = try Self.silentListener()
        defer { close(fd) }
        let attempt = WebSocketAttempt()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await #expect(throws: (any Error).self) {
                    _ = try await attempt.run(url: "ws://127.0.0.1:\(port)/ws", tls: nil, maxFrameBytes: 1024,
                                              connectTimeout: .seconds(60), logger: Self.quiet) { _, _, _ in }
                }
            }
            #expect(await eventually { attempt.hasChannel })
            #expect(attempt.end(.late))
            try await group.waitForAll()
        }
        #expect(attempt.ending == .late)
        #expect(!attempt.end(.stopped), "the first ending wins")
    }

    @Test func anAttemptEndedBeforeItStartsMakesNoConnection() async throws {
        let (fd, port) = try Self.silentListener()
        defer { close(fd) }
        let attempt = WebSocketAttempt()
        #expect(attempt.end(.stopped))
        await #expect(throws: CancellationError.self) {
            _ = try await attempt.run(url: "ws://127.0.0.1:\(port)/ws", tls: nil, maxFrameBytes: 1024,
                                      connectTimeout: .seconds(60), logger: Self.quiet) { _, _, _ in }
        }
        // Nothing reached the listener.
        #expect(fcntl(fd, F_SETFL, O_NONBLOCK) == 0)
        #expect(accept(fd, nil, nil) == -1 && errno == EAGAIN)
    }

    @Test func targetsReadTheirURL() throws {
        let t = try #require(WebSocketAttempt.Target("wss://hub.example:8443/api/ws?x=1"))
        #expect(t.tls && t.host == "hub.example" && t.port == 8443 && t.path == "/api/ws?x=1")
        #expect(t.hostHeader == "hub.example:8443" && t.origin == "wss://hub.example")
        let v6 = try #require(WebSocketAttempt.Target("ws://[::1]/ws"))
        #expect(v6.host == "::1" && v6.port == 80 && v6.hostHeader == "[::1]")
        #expect(WebSocketAttempt.Target("http://hub/ws") == nil)
    }
}
