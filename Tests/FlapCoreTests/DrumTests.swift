import Testing
@testable import FlapCore

@Suite struct DrumTests {
    @Test func standardIsTheSeedsSetInTheSeedsOrder() {
        #expect(Drum.standard.glyphs.map(\.text).joined() == " ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?+")
        #expect(Drum.standard.count == 40)
        #expect(Drum.standard.index(of: Glyph(character: "0")!) == 27)
        #expect(Drum.standard.index(of: Glyph(code: 63)!) == nil)
    }

    @Test func extendedCarriesEveryGlyph() {
        #expect(Drum.extended.count == Glyph.all.count)
        #expect(Set(Drum.extended.glyphs) == Set(Glyph.all))
        #expect(Drum.extended.glyphs.prefix(37).map(\.text).joined() == " ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        #expect(Drum.extended.glyphs.suffix(9).map(\.code) == Array(63...71))
    }

    @Test func splitflapDrums() {
        #expect(Drum.splitflap52.count == 52)
        #expect(Drum.splitflap40.count == 40)
        // ` ABCDEFGHIJKLMNOPQRSTUVWXYZg0123456789r.?-$'#yp,!@&w`
        #expect(Drum.splitflap52.glyphs[27] == Glyph(code: 66)!, "g is green")
        #expect(Drum.splitflap52.glyphs[38] == Glyph(code: 63)!, "r is red")
        #expect(Drum.splitflap52.glyphs[51] == Glyph(code: 69)!, "w is white")
        #expect(Drum.splitflap40.glyphs.last == Glyph(character: "'")!)
    }

    @Test func customDrumsAreChecked() throws {
        #expect(try Drum(spec: " AB{63}").count == 4)
        #expect(throws: DrumError.repeated("A")) { try Drum(spec: "ABA") }
        #expect(throws: DrumError.unknownGlyph("a")) { try Drum(spec: " a") }
        #expect(throws: DrumError.unknownGlyph("{43}")) { try Drum(spec: " {43}") }
        #expect(throws: DrumError.empty) { try Drum(spec: "") }
    }
}
