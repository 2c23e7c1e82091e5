/// The little of protobuf's wire format the splitflap protocol needs: varints and
/// length-delimited fields, written and read.
public struct ProtobufWriter {
    public private(set) var bytes: [UInt8] = []
    public init() {}

    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A varint field (wire type 0). proto3 leaves zero out.
    public mutating func field(_ number: Int, _ value: UInt64) {
        guard value != 0 else { return }
        varint(UInt64(number << 3))
        varint(value)
    }

    public mutating func field(_ number: Int, _ value: Bool) { field(number, value ? 1 : 0) }

    /// A length-delimited field (wire type 2): a sub-message or bytes. Written even when empty,
    /// since an empty sub-message still says which `oneof` case is set.
    public mutating func field(_ number: Int, message: [UInt8]) {
        varint(UInt64(number << 3 | 2))
        varint(UInt64(message.count))
        bytes += message
    }
}

/// Reads protobuf fields one by one; unknown fields are skipped by their wire type.
public struct ProtobufReader {
    public enum Value: Equatable {
        case varint(UInt64)
        case bytes([UInt8])
    }

    private let data: [UInt8]
    private var offset = 0

    public init(_ data: [UInt8]) { self.data = data }

    /// The next field, nil at the end; throws on bytes that are not protobuf.
    /// (Fixed-width fields, which the protocol never uses, are skipped in a loop: a frame of
    /// nothing else cannot deepen the stack.)
    public mutating func next() throws(ProtobufError) -> (number: Int, value: Value)? {
        while offset < data.count {
            let key = try varint()
            let number = Int(key >> 3)
            switch key & 7 {
            case 0: return (number, .varint(try varint()))
            case 2:
                let raw = try varint()
                guard raw <= UInt64(data.count - offset) else { throw ProtobufError(offset: offset, reason: "length \(raw) past the end") }
                let length = Int(raw)
                defer { offset += length }
                return (number, .bytes(Array(data[offset..<(offset + length)])))
            case 1:
                guard offset + 8 <= data.count else { throw ProtobufError(offset: offset, reason: "fixed64 past the end") }
                offset += 8
            case 5:
                guard offset + 4 <= data.count else { throw ProtobufError(offset: offset, reason: "fixed32 past the end") }
                offset += 4
            default:
                throw ProtobufError(offset: offset, reason: "wire type \(key & 7)")
            }
        }
        return nil
    }

    private mutating func varint() throws(ProtobufError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < data.count {
            let b = data[offset]
            offset += 1
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return value }
            shift += 7
            guard shift < 64 else { break }
        }
        throw ProtobufError(offset: offset, reason: "truncated varint")
    }
}

public struct ProtobufError: Error, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "not protobuf at byte \(offset): \(reason)" }
}
