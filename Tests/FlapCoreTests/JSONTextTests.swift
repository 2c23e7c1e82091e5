import FlapCore
import FlapMessages
import Foundation
import Testing

/// The frames written directly (`JSONObjectText`) are the text `JSONEncoder` writes from their
/// `Codable` definition — for strings with every kind of character, numbers of every shape, and
/// each optional field there or not.
@Suite struct JSONTextTests {
    /// SplitMix64: a fixed seed, so a failure can be run again.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func string(_ g: inout Seeded) -> String {
        let pieces: [String] = ["a", "Z", " ", "\"", "\\", "/", "\u{0}", "\u{1}", "\u{8}", "\u{9}", "\u{A}", "\u{C}", "\u{D}",
                                "\u{1F}", "\u{7F}", "é", "\u{2028}", "🙂", "{", "}", ":", ",", "\u{FEFF}"]
        return (0..<Int.random(in: 0...12, using: &g)).map { _ in pieces.randomElement(using: &g)! }.joined()
    }

    static func number(_ g: inout Seeded) -> Double {
        switch Int.random(in: 0...5, using: &g) {
        case 0: return Double(Int.random(in: 1_700_000_000...1_800_000_000, using: &g))
        case 1: return 1_764_000_000 + Double.random(in: 0..<1, using: &g)
        case 2: return Double.random(in: -1e-7...1e-7, using: &g)
        case 3: return Double.random(in: 1e15...1e22, using: &g)
        case 4: return [0, -0.0, 0.5, 2.25, 1e21, 5e-324].randomElement(using: &g)!
        default: return Double(bitPattern: g.next() & 0x7FEF_FFFF_FFFF_FFFF)
        }
    }

    static func maybe<T>(_ g: inout Seeded, _ make: (inout Seeded) -> T) -> T? {
        Bool.random(using: &g) ? make(&g) : nil
    }

    static func message(_ g: inout Seeded) -> APIMessage {
        let transition = maybe(&g) { g in
            TransitionFields(strategy: maybe(&g, string), stepSize: maybe(&g) { Int.random(in: -5...500, using: &$0) },
                             stepIntervalMs: maybe(&g) { Int.random(in: 0...5000, using: &$0) }, transition: maybe(&g, string),
                             speed: maybe(&g, string), arrival: maybe(&g, string), maxMoving: maybe(&g) { Int.random(in: 1...200, using: &$0) })
        }
        return APIMessage(id: string(&g), senderID: string(&g), senderUsername: string(&g), senderDisplayName: maybe(&g, string),
                          recipientID: maybe(&g, string), content: string(&g), contentType: InboxMessage.ContentType.allCases.randomElement(using: &g)!,
                          timestamp: number(&g), unlockAt: maybe(&g, number), expiresAt: maybe(&g, number), status: maybe(&g, string),
                          transition: transition, arriveAt: maybe(&g, number), duration: maybe(&g, number), forced: maybe(&g) { Bool.random(using: &$0) })
    }

    /// What `WireFrame.text` wrote before: the `Codable` definition through `JSONEncoder`.
    static func encoded(_ frame: WireFrame) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(frame), as: UTF8.self)
    }

    @Test func theFramesWrittenDirectlyAreWhatJSONEncoderWrites() throws {
        var g = Seeded(state: 37)
        for i in 0..<2000 {
            let m = Self.message(&g)
            for frame in [WireFrame.new(m), .delivered(messageID: m.id, recipientID: m.senderID), .deleted(messageID: m.content)] {
                let text = frame.text
                #expect(text == (try Self.encoded(frame)), "case \(i)")
                #expect(try WireFrame.decode(text) == frame, "case \(i): it reads back")
            }
        }
    }

    @Test func aStringEscapesSlashesOnlyWhenAsked() {
        var plain = JSONObjectText(escapingSlashes: false), escaped = JSONObjectText(escapingSlashes: true)
        plain.add("a/b", "c/d"); escaped.add("a/b", "c/d")
        #expect(plain.text == #"{"a/b":"c/d"}"#)
        #expect(escaped.text == #"{"a\/b":"c\/d"}"#)
    }
}
