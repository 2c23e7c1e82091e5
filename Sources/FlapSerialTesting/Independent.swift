import Foundation

/// The bytes each protocol writes, read back by decoders written here (not the encoders run
/// backwards): a byte-at-a-time COBS unstuffer, a bitwise CRC-32, a protobuf field walker.
public enum Independent {
    /// Splits a stream at 0x00 and unstuffs each frame.
    public static func frames(_ stream: [UInt8]) -> [[UInt8]] {
        stream.split(separator: 0, omittingEmptySubsequences: true).map { unstuff(Array($0)) }
    }

    public static func unstuff(_ s: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var remaining = 0
        var lastCode = 0
        for b in s {
            if remaining == 0 {
                if lastCode != 0 && lastCode != 255 { out.append(0) }
                lastCode = Int(b)
                remaining = Int(b) - 1
            } else {
                out.append(b)
                remaining -= 1
            }
        }
        return out
    }

    public static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in data {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }

    /// Checks and strips the trailing CRC32-LE.
    public static func body(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count >= 4 else { return nil }
        let body = Array(raw.dropLast(4)), t = Array(raw.suffix(4))
        let crc = UInt32(t[0]) | UInt32(t[1]) << 8 | UInt32(t[2]) << 16 | UInt32(t[3]) << 24
        return crc == crc32(body) ? body : nil
    }

    /// Protobuf fields in order: (number, varint value or bytes).
    public static func fields(_ data: [UInt8]) -> [(Int, UInt64?, [UInt8]?)] {
        var i = 0
        var out: [(Int, UInt64?, [UInt8]?)] = []
        func varint() -> UInt64 {
            var v: UInt64 = 0, shift: UInt64 = 0
            while true {
                let b = data[i]; i += 1
                v += UInt64(b & 127) << shift
                if b < 128 { return v }
                shift += 7
            }
        }
        while i < data.count {
            let key = varint()
            if key & 7 == 0 { out.append((Int(key >> 3), varint(), nil)) } else {
                let n = Int(varint())
                out.append((Int(key >> 3), nil, Array(data[i..<(i + n)])))
                i += n
            }
        }
        return out
    }
}
extension Independent {
    public static func varint(_ v: UInt64) -> [UInt8] {
        var out: [UInt8] = [], x = v
        repeat { out.append(UInt8(x & 127) | (x >= 128 ? 128 : 0)); x >>= 7 } while x > 0
        return out
    }
}

extension Independent {
    /// COBS, written here from the definition (not the encoder under test).
    public static func stuff(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var block: [UInt8] = []
        for b in data {
            if b == 0 {
                out.append(UInt8(block.count + 1))
                out += block
                block = []
            } else {
                block.append(b)
                if block.count == 254 {
                    out.append(255)
                    out += block
                    block = []
                }
            }
        }
        out.append(UInt8(block.count + 1))
        return out + block
    }
}
