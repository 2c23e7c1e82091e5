/// Follows the frame headers of a WebSocket stream from a client and finds the first frame
/// that is not masked (RFC 6455 §5.1: a server must close the connection on one).
struct MaskCheck {
    /// Where the scan is: a frame header's bytes so far, or payload bytes still to skip.
    private var header: [UInt8] = []
    private var skip: UInt64 = 0

    /// Reads the next bytes; false once a frame without a mask has begun.
    mutating func read(_ bytes: some Sequence<UInt8>) -> Bool {
        for b in bytes {
            if skip > 0 { skip -= 1; continue }
            header.append(b)
            guard header.count >= 2 else { continue }
            guard header[1] & 0x80 != 0 else { return false }
            let short = header[1] & 0x7F
            let lengthBytes = short == 126 ? 2 : short == 127 ? 8 : 0
            guard header.count == 2 + lengthBytes + 4 else { continue }
            var length = UInt64(short)
            if lengthBytes > 0 { length = header[2..<(2 + lengthBytes)].reduce(0) { $0 << 8 | UInt64($1) } }
            skip = length
            header.removeAll(keepingCapacity: true)
        }
        return true
    }
}
