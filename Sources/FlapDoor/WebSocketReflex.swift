import NIOCore

/// A WebSocket text message a server answers at its `FrontDoor`, before any frame is decoded:
/// a board's keepalive ping, which 100,000 boards send 5,000 times a second, answered without
/// the pipeline's decoder, aggregator, handler and encoder, and without allocating.
///
/// The door answers a read only when it is exactly one frame of this message (masked, FIN, the
/// bytes the same), the stream stood between messages before it, the connection is writable,
/// and its owner said nothing of its own is pending (`FrontDoor.reflexOpen`) — so the answer is
/// written in the order the frames came, as the owner would have. Anything else goes in as before.
public struct WebSocketReflex: Sendable {
    /// The message's text; its answer's whole frame, as the server sends it (unmasked).
    let text: [UInt8]
    let answer: ByteBuffer

    /// `text` and `answer` are under 126 bytes each (a frame with the short length form).
    public init(text: String, answer: String) {
        self.text = Array(text.utf8)
        precondition(self.text.count < 126 && answer.utf8.count < 126, "a reflex is for short messages")
        var frame = ByteBuffer()
        frame.writeBytes([0x81, UInt8(answer.utf8.count)])
        frame.writeString(answer)
        self.answer = frame
    }

    /// Whether `bytes` are exactly one masked, final text frame of this message.
    func matches(_ bytes: ByteBuffer) -> Bool {
        let n = text.count
        guard bytes.readableBytes == 6 + n else { return false }
        return bytes.withUnsafeReadableBytes { b in
            guard b[0] == 0x81, b[1] == 0x80 | UInt8(n) else { return false }
            for i in 0..<n where b[6 + i] ^ b[2 + (i & 3)] != text[i] { return false }
            return true
        }
    }
}
