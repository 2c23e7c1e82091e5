import Testing
@testable import FlapCore

@Suite struct GlyphTests {
    /// The whole Vestaboard table, as anchors.md gives it.
    static let expected: [Int: String] = {
        var t: [Int: String] = [0: " "]
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZ".enumerated() { t[1 + i] = String(c) }
        for (i, c) in "123456789".enumerated() { t[27 + i] = String(c) }
        t[36] = "0"
        let symbols: [Int: String] = [37: "!", 38: "@", 39: "#", 40: "$", 41: "(", 42: ")", 44: "-", 46: "+",
                                      47: "&", 48: "=", 49: ";", 50: ":", 52: "'", 53: "\"", 54: "%", 55: ",",
                                      56: ".", 59: "/", 60: "?", 62: "°"]
        t.merge(symbols) { a, _ in a }
        for code in 63...71 { t[code] = "{\(code)}" }
        return t
    }()

    @Test func everyCodeOfTheTable() {
        for code in -1...80 {
            let glyph = Glyph(code: code)
            if let text = Self.expected[code] {
                #expect(glyph?.text == text, "code \(code)")
                #expect(glyph.map { Int($0.code) } == code)
            } else {
                #expect(glyph == nil, "code \(code) must be undefined")
            }
        }
        #expect(Glyph.all.count == 66)
        for unused in [43, 45, 51, 57, 58, 61] { #expect(Glyph(code: unused) == nil) }
    }

    @Test func textRoundTrips() {
        for (code, text) in Self.expected where code < 63 {
            #expect(Glyph(character: Character(text)).map { Int($0.code) } == code, "'\(text)'")
        }
        #expect(Glyph(character: "a") == nil)
        #expect(Glyph(character: "é") == nil)
    }

    @Test func colourChips() {
        let letters = (63...71).map { Glyph(code: $0)!.chip!.letter }
        #expect(String(letters) == "roygbvwk#")
        #expect(Glyph(code: 63)!.chip == .red)
        #expect(Glyph(code: 62)!.chip == nil)
        #expect(ColorChip.orange.rgb == (0xFF, 0x66, 0x00))
    }

    @Test func rawCodesInText() {
        #expect(GlyphToken.parse("A{63}B") == [.character("A"), .code(63), .character("B")])
        #expect(GlyphToken.parse("{5}") == [.code(5)])
        #expect(GlyphToken.parse("{x}") == [.character("{"), .character("x"), .character("}")])
        #expect(GlyphToken.parse("{1234}").count == 6, "four digits are not a code")
        #expect(GlyphToken.parse("{12") == [.character("{"), .character("1"), .character("2")])
        #expect(GlyphToken.parse("") == [])
    }
}
