/// Follows the frame headers of a WebSocket stream from a client and finds the first frame
/// that is not masked (RFC 6455 §5.1: a server must close the connection on one); knows when
/// the stream stands between two messages.
struct MaskCheck {
    /// Where the scan is: a frame header's bytes so far, or payload bytes still to skip.
    private var header: [UInt8] = []
    private var skip: UInt64 = 0
    /// A data frame without FIN was begun and its message's last frame has not come.
    private var midMessage = false

    /// Whether the bytes read so far end where a frame ends and no message is left unfinished.
    var betweenMessages: Bool { header.isEmpty && skip == 0 && !midMessage }

    /// Reads the next bytes; false once a frame without a mask has begun.
    mutating func read<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var i = bytes.startIndex
        while i != bytes.endIndex {
            if skip > 0 {
                let step = min(skip, UInt64(bytes.distance(from: i, to: bytes.endIndex)))
                i = bytes.index(i, offsetBy: Int(step))
                skip -= step
                continue
            }
            header.append(bytes[i])
            i = bytes.index(after: i)
            guard header.count >= 2 else { continue }
            guard header[1] & 0x80 != 0 else { return false }
            let short = header[1] & 0x7F
            let lengthBytes = short == 126 ? 2 : short == 127 ? 8 : 0
            guard header.count == 2 + lengthBytes + 4 else { continue }
            var length = UInt64(short)
            if lengthBytes > 0 { length = header[2..<(2 + lengthBytes)].reduce(0) { $0 << 8 | UInt64($1) } }
            // Control frames (opcode 8 and over) may come between a message's frames.
            if header[0] & 0x0F < 8 { midMessage = header[0] & 0x80 == 0 }
            skip = length
            header.removeAll(keepingCapacity: true)
        }
        return true
    }
}
