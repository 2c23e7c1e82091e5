#if canImport(Glibc)
import Glibc
#endif
import EndToEndSupport
import Foundation
import Synchronization
import Testing
import TestWaits

/// Issue 37, item 6 (hostile doors): a board's socket that authenticates and then never reads.
/// Before, each event to it was written inline by the request that published it: once its unsent
/// frames filled the kernel's buffers and NIO's high watermark, every send to that board waited
/// for it — until the front door's 408 — and so did whatever else told that user something.
@Suite struct HubStalledSocketTests {
    @Test(.timeLimit(.minutes(20))) func aSocketThatStopsReadingIsDroppedAndHoldsUpNoOne() async throws {
        let hub = try await HubHarness(config: "messages_per_hour: 100000", engine: .sqlite)
        try await hub.users(["alice", "board"], friends: [("alice", "board")])
        try await hub.start()
        let healthy = try #require(await SocketWatch.authenticated(port: hub.port, token: hub.tokens["board"]!))
        defer { healthy.stop() }
        let stalled = try StalledClient(port: hub.port, token: hub.tokens["board"]!)
        defer { stalled.close() }
        let process = try #require(hub.process)
        #expect(await process.waitUntil { _, e in e.components(separatedBy: "socket authenticated").count - 1 == 2 }, "\(process.stderr)")
        // Messages to the board until the hub drops the socket that does not read: VBML
        // documents of nearly 8 KiB (the largest a message may be), four senders at a time, so
        // that some 1–2 MB fill a 4 KiB receive window, the kernel's send buffer (it grows on
        // loopback) and NIO's 64 KiB in a few hundred sends.
        let filler = String(repeating: "X", count: 7900)
        final class Tally: Sendable { let statuses = Mutex<[Int: Int]>([:]), sent = Atomic<Int>(0) }
        let tally = Tally()
        let dropped = { @Sendable in process.stderr.contains("socket dropped: it stopped reading") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    while !dropped() {
                        let n = tally.sent.add(1, ordering: .relaxed).newValue
                        guard n <= 2_000 else { return }
                        let document = #"{"props":{"filler":"\#(filler)"},"components":[{"template":"message \#(n)"}]}"#
                        let answer = try await hub.request("POST", "/api/v1/messages", as: "alice",
                                                           json: ["recipients": ["board"], "content": document, "contentType": "vbml"])
                        tally.statuses.withLock { $0[answer.status, default: 0] += 1 }
                        if answer.status != 201 { return }
                    }
                }
            }
            try await group.waitForAll()
        }
        let statuses = tally.statuses.withLock { $0 }, sent = statuses.values.reduce(0, +)
        print("stalled socket: \(sent) messages sent until it was dropped; answers \(statuses)")
        #expect(dropped(), "after \(sent) messages")
        #expect(statuses == [201: sent], "every send answered at once, none held by the socket that does not read")
        // The board's other socket had every message.
        let news = { @Sendable in healthy.frames.filter { $0.contains("message.new") }.count }
        #expect(await eventually(within: 60) { news() >= sent }, "\(news()) of \(sent): \(healthy.frames.suffix(2).map { $0.prefix(300) })")
        // And the stalled one was closed by the hub: past the frames it left unread, its end.
        #expect(await offPool { stalled.readsToTheEnd() }, "the hub closed the socket")
    }
}

/// A raw WebSocket client on loopback with a 4 KiB receive buffer: it upgrades, sends its
/// `authenticate` frame (masked, as a client must) and reads nothing until asked.
final class StalledClient: @unchecked Sendable {
    let fd: Int32

    init(port: Int, token: String) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HarnessError("connect: errno \(errno)") }
        let head = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try send(Array(head.utf8))
        let payload = Array(#"{"type":"authenticate","token":"\#(token)"}"#.utf8)
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        precondition(payload.count < 126)
        try send([0x81, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $1 ^ mask[$0 % 4] })
    }

    private func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw HarnessError("write: errno \(errno)") }
            offset += n
        }
    }

    /// Reads everything left until the peer closes (true) — or nothing comes for 60 s (false).
    func readsToTheEnd() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var wait = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    func close() { _ = Glibc.close(fd) }
}
