import Testing
@testable import FlapCore

/// Lines of a frame as plain text (chips as their code text), trailing blanks kept.
func lines(_ f: Frame) -> [String] {
    (0..<f.rows).map { r in (0..<f.cols).map { f[r, $0].chip == nil ? f[r, $0].text : "#" }.joined() }
}

@Suite struct LayoutTests {
    let mapper = GlyphMapper(drum: .extended)
    func place(_ text: String, _ layout: Layout = Layout(), rows: Int = 6, cols: Int = 22) -> Layout.Result {
        layout.place(text, rows: rows, cols: cols, mapper: mapper)
    }

    @Test func centeredByDefault() {
        let r = place("hello world")
        #expect(lines(r.frame)[2] == "     HELLO WORLD      ")
        #expect(lines(r.frame).enumerated().allSatisfy { $0.offset == 2 || $0.element.allSatisfy { $0 == " " } })
        #expect(r.cut.isEmpty)
    }

    @Test func exactWidthWordFillsTheLine() {
        let word = String(repeating: "W", count: 22)
        let r = place("\(word) X", Layout(horizontal: .left, vertical: .top))
        #expect(lines(r.frame)[0] == word)
        #expect(lines(r.frame)[1].hasPrefix("X "))
    }

    @Test func wrapsAtTheWidth() {
        // 10 + 1 + 11 = 22 fits; the next word does not.
        let r = place("AAAAAAAAAA BBBBBBBBBBB C", Layout(horizontal: .left, vertical: .top))
        #expect(lines(r.frame)[0] == "AAAAAAAAAA BBBBBBBBBBB")
        #expect(lines(r.frame)[1].hasPrefix("C "))
    }

    @Test func overlongWordsBreak() {
        let r = place("HI " + String(repeating: "X", count: 30), Layout(horizontal: .left, vertical: .top))
        let l = lines(r.frame)
        #expect(l[0].hasPrefix("HI "))
        #expect(l[1] == String(repeating: "X", count: 22))
        #expect(l[2] == String(repeating: "X", count: 8) + String(repeating: " ", count: 14))
        #expect(place(String(repeating: "Y", count: 44), Layout(vertical: .top)).frame[2, 0] == .blank,
                "a word of exactly two lines leaves no empty third line behind")
    }

    @Test func emptyAndOnlyNewlines() {
        for text in ["", "\n", "\n\n\n", "\n\n\n\n\n\n\n\n\n\n", "   "] {
            let r = place(text)
            #expect(r.frame == Frame(rows: 6, cols: 22), "\(text.debugDescription)")
            #expect(r.cut.isEmpty, "blank lines cut lose nothing")
        }
    }

    @Test func explicitNewlines() {
        let r = place("A\nB\r\nC", Layout(horizontal: .left, vertical: .top))
        #expect(lines(r.frame).prefix(3).map { $0.first! } == ["A", "B", "C"])
    }

    @Test func rawCodeAtTheLineEnd() {
        let text = String(repeating: "A", count: 21) + "{63}"
        let r = place(text, Layout(horizontal: .left, vertical: .top))
        #expect(r.frame[0, 21].code == 63)
        #expect(r.frame[1, 0] == .blank, "the code counts as one module, so the word fits")
    }

    @Test func alignments() {
        let br = place("AB", Layout(horizontal: .right, vertical: .bottom), rows: 3, cols: 5)
        #expect(lines(br.frame) == ["     ", "     ", "   AB"])
        let tl = place("AB", Layout(horizontal: .left, vertical: .top), rows: 3, cols: 5)
        #expect(lines(tl.frame) == ["AB   ", "     ", "     "])
        let cc = place("AB\nCDE", rows: 4, cols: 5)
        #expect(lines(cc.frame) == ["     ", " AB  ", " CDE ", "     "])
    }

    @Test func textThatDoesNotFitIsCutAndReported() {
        let r = place("ONE\nTWO\nTHREE", rows: 2, cols: 5)
        #expect(lines(r.frame) == [" ONE ", " TWO "])
        #expect(r.cut == ["THREE"])
    }

    @Test func spacesFold() {
        let r = place("A    B", Layout(horizontal: .left, vertical: .top))
        #expect(lines(r.frame)[0].hasPrefix("A B "))
    }

    @Test func substitutionsAreReportedOnce() {
        let r = GlyphMapper(drum: .standard)
        let result = Layout().place("café, café", rows: 6, cols: 22, mapper: r)
        #expect(result.substitutions.map(\.original) == ["é", ","])
    }
}
