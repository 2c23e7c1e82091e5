import Testing
@testable import FlapCore

@Suite struct GlyphMapperTests {
    let standard = GlyphMapper(drum: .standard)

    @Test func lowerCaseIsUpperCaseWithoutReport() {
        let (g, sub) = standard.map(.character("q"))
        #expect(g.text == "Q")
        #expect(sub == nil)
    }

    @Test func accentsFoldAndAreReported() {
        let (g, sub) = standard.map(.character("é"))
        #expect(g.text == "E")
        #expect(sub == Substitution(original: "é", shown: Glyph(character: "E")!))
    }

    @Test func unknownBecomesFallback() {
        #expect(standard.map(.character("🙂")).glyph == .blank)
        #expect(standard.map(.character(",")).glyph == .blank, "comma is not on the standard drum")
        #expect(standard.map(.code(63)).glyph == .blank, "no colour chips on the standard drum")
        #expect(standard.map(.code(43)).substitution?.original == "{43}")
        let question = GlyphMapper(drum: .standard, fallback: Glyph(character: "?")!)
        #expect(question.map(.character("#")).glyph.text == "?")
    }

    @Test func configuredSubstitutesComeFirst() {
        let m = GlyphMapper(drum: .standard, substitutes: [",": Glyph(character: "+")!, "{63}": Glyph(character: "R")!])
        #expect(m.map(.character(",")).glyph.text == "+")
        #expect(m.map(.code(63)).glyph.text == "R")
    }

    @Test func lookAlikesOnTheExtendedDrum() {
        let m = GlyphMapper(drum: .extended)
        #expect(m.map(.character("\u{2019}")).glyph.text == "'")
        #expect(m.map(.character("\u{2764}")).glyph.code == 62)
        #expect(m.map(.code(63)).glyph.code == 63)
        #expect(m.map(.code(63)).substitution == nil)
    }

    @Test func fallbackOffTheDrumBecomesItsFirstFlap() throws {
        let drum = try Drum(spec: "ABC")
        #expect(GlyphMapper(drum: drum).fallback.text == "A")
    }
}
