/// CRC-32 as zlib computes it (reflected polynomial 0xEDB88320, initial and final XOR all ones).
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum(_ data: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    /// The checksum's four bytes, least significant first (as both serial protocols send it).
    public static func littleEndian(_ data: some Sequence<UInt8>) -> [UInt8] {
        let c = checksum(data)
        return [UInt8(c & 0xFF), UInt8(c >> 8 & 0xFF), UInt8(c >> 16 & 0xFF), UInt8(c >> 24)]
    }
}
