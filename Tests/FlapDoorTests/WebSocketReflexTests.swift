import NIOCore
import NIOEmbedded
import Testing
@testable import FlapDoor

/// The door answers a board's ping itself only when the read is that ping alone, between
/// messages, and its owner has nothing pending; anything else goes in as it came.
@Suite struct WebSocketReflexTests {
    static let ping = #"{"type":"ping"}"#
    static let pong: [UInt8] = [0x81, 15] + Array(#"{"type":"pong"}"#.utf8)

    /// A client frame of `text`, masked with `mask`.
    func frame(_ text: String, fin: Bool = true, mask: [UInt8] = [7, 1, 200, 33]) -> [UInt8] {
        let bytes = Array(text.utf8)
        return [fin ? 0x81 : 0x01, 0x80 | UInt8(bytes.count)] + mask + bytes.enumerated().map { $1 ^ mask[$0 & 3] }
    }

    /// A door past its upgrade (the 101 written), its reflex set and open.
    func upgradedDoor() throws -> (EmbeddedChannel, FrontDoor) {
        let limits = DoorLimits()
        let door = FrontDoor(census: ConnectionCensus(limits: limits), limits: limits)
        let channel = EmbeddedChannel(handler: door)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(string: "GET /ws HTTP/1.1\r\nHost: x\r\n\r\n"))
        _ = try channel.readInbound(as: ByteBuffer.self)
        try channel.writeOutbound(ByteBuffer(string: "HTTP/1.1 101 Switching Protocols\r\n\r\n"))
        _ = try channel.readOutbound(as: ByteBuffer.self)
        door.reflex = WebSocketReflex(text: Self.ping, answer: #"{"type":"pong"}"#)
        door.reflexOpen = true
        return (channel, door)
    }

    /// What a read of `bytes` did: the bytes answered at the door, and those passed in.
    func read(_ bytes: [UInt8], _ channel: EmbeddedChannel) throws -> (answered: [UInt8], passed: [UInt8]) {
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        let answered = try channel.readOutbound(as: ByteBuffer.self).map { Array($0.readableBytesView) } ?? []
        let passed = try channel.readInbound(as: ByteBuffer.self).map { Array($0.readableBytesView) } ?? []
        return (answered, passed)
    }

    @Test func aPingAloneIsAnsweredAtTheDoorWhateverItsMask() throws {
        let (channel, _) = try upgradedDoor()
        for mask: [UInt8] in [[7, 1, 200, 33], [0, 0, 0, 0], [255, 254, 253, 252]] {
            let r = try read(frame(Self.ping, mask: mask), channel)
            #expect(r.answered == Self.pong && r.passed.isEmpty, "\(mask)")
        }
    }

    @Test func anythingElseGoesIn() throws {
        let (channel, door) = try upgradedDoor()
        let ping = frame(Self.ping)
        // Another message; a ping spelled otherwise; a ping beside another frame in one read.
        for bytes in [frame(#"{"type":"pong"}"#), frame(#"{ "type":"ping"}"#), ping + frame("x"), frame("x") + ping] {
            let r = try read(bytes, channel)
            #expect(r.answered.isEmpty && r.passed == bytes, "\(bytes)")
        }
        // Its owner has something pending.
        door.reflexOpen = false
        #expect(try read(ping, channel) == ([], ping))
        door.reflexOpen = true
        // A read that ends within a frame: the next read, though its bytes are a ping's, is
        // the rest of that frame's payload (a binary frame, unmasked by a zero mask).
        let head: [UInt8] = [0x82, 0x80 | 30, 0, 0, 0, 0] + Array(repeating: 0x41, count: 9)
        #expect(try read(head, channel) == ([], head))
        #expect(try read(ping, channel) == ([], ping))
        #expect(try read(ping, channel).answered == Self.pong)
        // Within a fragmented message (a text frame without FIN) a ping goes in, and after its
        // last frame the door answers again.
        #expect(try read(frame("part", fin: false), channel).answered.isEmpty)
        #expect(try read(ping, channel) == ([], ping))
        #expect(try read([0x80, 0x81, 1, 2, 3, 4, 0x41], channel).answered.isEmpty)
        #expect(try read(ping, channel).answered == Self.pong)
    }
}
