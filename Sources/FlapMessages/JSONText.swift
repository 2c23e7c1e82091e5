import FlapCore

/// A JSON object written directly, for what flaphub writes for every message it accepts: the
/// `message.new` and `message.delivered` frames and the send's answer (issue 37: Foundation's
/// `JSONEncoder` took 13 % of flaphub's processor time a message). It writes the text
/// `JSONEncoder` writes with `.sortedKeys` — keys in order, an absent optional left out, a number
/// as Swift's shortest form without a trailing `.0`, a string escaped as its writer escapes one
/// (`/` too, unless `withoutEscapingSlashes`) — which `JSONTextTests` checks, value by value,
/// against `JSONEncoder` itself. The `Codable` definitions stay what reads these texts and what
/// writes everything else.
public struct JSONObjectText: Sendable {
    private var fields: [(key: String, json: String)] = []
    private let escapingSlashes: Bool

    public init(escapingSlashes: Bool) { self.escapingSlashes = escapingSlashes }

    public mutating func add(_ key: String, _ value: String?) {
        if let value { fields.append((key, quoted(value))) }
    }

    public mutating func add(_ key: String, _ value: Double?) {
        guard let value else { return }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        fields.append((key, text))
    }

    public mutating func add(_ key: String, _ value: Int?) {
        if let value { fields.append((key, String(value))) }
    }

    public mutating func add(_ key: String, _ value: Bool?) {
        if let value { fields.append((key, value ? "true" : "false")) }
    }

    public mutating func add(_ key: String, _ value: JSONObjectText?) {
        if let value { fields.append((key, value.text)) }
    }

    /// An array of objects.
    public mutating func add(_ key: String, _ values: [JSONObjectText]) {
        fields.append((key, "[" + values.map(\.text).joined(separator: ",") + "]"))
    }

    /// The object's text, its keys sorted as `JSONEncoder`'s `.sortedKeys` sorts them.
    public var text: String {
        var out = "{"
        for (i, field) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { out += "," }
            out += quoted(field.key)
            out += ":"
            out += field.json
        }
        return out + "}"
    }

    private func quoted(_ string: String) -> String {
        // Most strings (ids, usernames, plain text) need no escape: copied whole.
        let slash = escapingSlashes ? UInt8(ascii: "/") : UInt8(ascii: "\"")
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == slash }) {
            return "\"" + string + "\""
        }
        var out = [UInt8]()
        out.reserveCapacity(string.utf8.count + 2)
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "/") where escapingSlashes: out += [UInt8(ascii: "\\"), UInt8(ascii: "/")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}

extension TransitionFields {
    /// As its `Codable` definition writes it.
    public func jsonObject(escapingSlashes: Bool) -> JSONObjectText {
        var o = JSONObjectText(escapingSlashes: escapingSlashes)
        o.add("strategy", strategy); o.add("step_size", stepSize); o.add("step_interval_ms", stepIntervalMs)
        o.add("transition", transition); o.add("speed", speed); o.add("arrival", arrival); o.add("max_moving", maxMoving)
        return o
    }
}

extension APIMessage {
    /// As its `Codable` definition writes it.
    public func jsonObject(escapingSlashes: Bool) -> JSONObjectText {
        var o = JSONObjectText(escapingSlashes: escapingSlashes)
        o.add("id", id); o.add("senderID", senderID); o.add("senderUsername", senderUsername)
        o.add("senderDisplayName", senderDisplayName); o.add("recipientID", recipientID); o.add("content", content)
        o.add("contentType", contentType.rawValue); o.add("timestamp", timestamp); o.add("unlockAt", unlockAt)
        o.add("expiresAt", expiresAt); o.add("status", status); o.add("transition", transition?.jsonObject(escapingSlashes: escapingSlashes))
        o.add("arriveAt", arriveAt); o.add("duration", duration); o.add("forced", forced)
        return o
    }
}
