import Foundation

/// JSON text of a typed value with every object's keys in code-point order and `/` unescaped, so
/// that the same value always reads the same: what the doors answer, the web feed's events and
/// the MQTT payloads are written so.
public enum SortedJSON {
    public static func data<T: Encodable>(encoding value: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("null".utf8)
    }

    public static func string<T: Encodable>(encoding value: T) -> String { String(decoding: data(encoding: value), as: UTF8.self) }
}
