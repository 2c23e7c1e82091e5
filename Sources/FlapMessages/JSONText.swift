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
    /// Each field's key and its value's JSON text, as UTF-8 — written once, into the object's
    /// text at the end (no `String` a field: 7–8 % of flaphub's processor time a message was
    /// this type's work, most of it making and joining strings).
    private var fields: [(key: String, json: [UInt8])] = []
    private let escapingSlashes: Bool

    public init(escapingSlashes: Bool) { self.escapingSlashes = escapingSlashes }

    public mutating func add(_ key: String, _ value: String?) {
        guard let value else { return }
        var json: [UInt8] = []
        Self.quote(value, escapingSlashes: escapingSlashes, into: &json)
        fields.append((key, json))
    }

    public mutating func add(_ key: String, _ value: Double?) {
        guard let value else { return }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        fields.append((key, Array(text.utf8)))
    }

    public mutating func add(_ key: String, _ value: Int?) {
        if let value { fields.append((key, Array(String(value).utf8))) }
    }

    public mutating func add(_ key: String, _ value: Bool?) {
        if let value { fields.append((key, Array((value ? "true" : "false").utf8))) }
    }

    public mutating func add(_ key: String, _ value: JSONObjectText?) {
        if let value { fields.append((key, value.bytes)) }
    }

    /// An array of objects.
    public mutating func add(_ key: String, _ values: [JSONObjectText]) {
        var json: [UInt8] = [UInt8(ascii: "[")]
        for (i, value) in values.enumerated() {
            if i > 0 { json.append(UInt8(ascii: ",")) }
            json += value.bytes
        }
        json.append(UInt8(ascii: "]"))
        fields.append((key, json))
    }

    /// The object's text, its keys sorted as `JSONEncoder`'s `.sortedKeys` sorts them.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The object's text as UTF-8.
    public var bytes: [UInt8] {
        let sorted = fields.sorted { $0.key < $1.key }
        var out: [UInt8] = []
        out.reserveCapacity(sorted.reduce(2) { $0 + $1.key.utf8.count + $1.json.count + 4 })
        out.append(UInt8(ascii: "{"))
        for (i, field) in sorted.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            Self.quote(field.key, escapingSlashes: escapingSlashes, into: &out)
            out.append(UInt8(ascii: ":"))
            out += field.json
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// `string` as a JSON string, escaped as `JSONEncoder` escapes one, appended to `out`.
    private static func quote(_ string: String, escapingSlashes: Bool, into out: inout [UInt8]) {
        let slash = escapingSlashes ? UInt8(ascii: "/") : UInt8(ascii: "\"")
        out.append(UInt8(ascii: "\""))
        // Most strings (ids, usernames, plain text) need no escape: copied whole.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == slash }) {
            out += string.utf8
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            let escaped: UInt8
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): escaped = byte
            case UInt8(ascii: "/") where escapingSlashes: escaped = byte
            case 0x08: escaped = UInt8(ascii: "b")
            case 0x0C: escaped = UInt8(ascii: "f")
            case 0x0A: escaped = UInt8(ascii: "n")
            case 0x0D: escaped = UInt8(ascii: "r")
            case 0x09: escaped = UInt8(ascii: "t")
            case 0..<0x20:
                out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "u")); out.append(UInt8(ascii: "0")); out.append(UInt8(ascii: "0"))
                out.append(hex[Int(byte >> 4)]); out.append(hex[Int(byte & 0xF)])
                continue
            default:
                out.append(byte)
                continue
            }
            out.append(UInt8(ascii: "\\")); out.append(escaped)
        }
        out.append(UInt8(ascii: "\""))
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
