import Foundation

/// JSON text with every object's keys in code-point order, so that the same value always reads
/// the same: of a typed value (`data(encoding:)`, what the doors answer), or of a value as
/// `JSONSerialization` takes it (`data(_:)`, for documents with no type of their own, such as
/// Home Assistant's discovery).
public enum SortedJSON {
    public static func data(_ value: Any) -> Data {
        var out = Data()
        write(value, into: &out)
        return out
    }

    public static func string(_ value: Any) -> String { String(decoding: data(value), as: UTF8.self) }

    /// JSON text of a typed value, keys in code-point order and `/` unescaped: the text `data`
    /// writes for the same value. What the doors answer is written so; `data(_: Any)` is for
    /// what has no type of its own (Home Assistant's discovery documents).
    public static func data<T: Encodable>(encoding value: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("null".utf8)
    }

    public static func string<T: Encodable>(encoding value: T) -> String { String(decoding: data(encoding: value), as: UTF8.self) }

    static func write(_ value: Any, into out: inout Data) {
        switch value {
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            for (i, field) in object.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(field.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(field.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case let array as [Any]:
            out.append(UInt8(ascii: "["))
            for (i, item) in array.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        default:
            out.append((try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .withoutEscapingSlashes])) ?? Data("null".utf8))
        }
    }
}
