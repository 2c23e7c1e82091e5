import Foundation

/// JSON text of a value as `JSONSerialization` takes it, with every object's keys in code-point
/// order, so that the same value always reads the same. (Foundation's `.sortedKeys` compares keys
/// through a `Locale`, and that loads ICU's locale data into the process: about a megabyte of
/// resident memory in the daemon, for ordering a few ASCII keys.)
public enum SortedJSON {
    public static func data(_ value: Any) -> Data {
        var out = Data()
        write(value, into: &out)
        return out
    }

    public static func string(_ value: Any) -> String { String(decoding: data(value), as: UTF8.self) }

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
