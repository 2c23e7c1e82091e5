/// Consistent Overhead Byte Stuffing: a frame with no 0x00 inside, so that 0x00 can delimit
/// frames on a byte stream. At most one byte of overhead per 254.
public enum COBS {
    /// The stuffed bytes (without the 0x00 delimiter).
    public static func encode(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0]
        out.reserveCapacity(data.count + data.count / 254 + 2)
        var codeIndex = 0
        var code: UInt8 = 1
        for byte in data {
            if byte == 0 {
                out[codeIndex] = code
                codeIndex = out.count
                out.append(0)
                code = 1
            } else {
                out.append(byte)
                code += 1
                if code == 0xFF {
                    out[codeIndex] = code
                    codeIndex = out.count
                    out.append(0)
                    code = 1
                }
            }
        }
        out[codeIndex] = code
        return out
    }

    /// The original bytes of a stuffed frame (without its delimiter), or nil when it is not
    /// valid COBS (a zero inside, or a code pointing past the end).
    public static func decode(_ data: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(data.count)
        var i = 0
        while i < data.count {
            let code = Int(data[i])
            guard code != 0, i + code <= data.count else { return nil }
            for j in (i + 1)..<(i + code) {
                guard data[j] != 0 else { return nil }
                out.append(data[j])
            }
            i += code
            if code != 0xFF, i < data.count { out.append(0) }
        }
        return out
    }
}
