import FlapCore
import Testing
@testable import FlapTerminal

@Suite struct PlainFrameTests {
    @Test func framesAreBorderedRowsOfExactlyColsCharacters() throws {
        let f = try Frame(codes: [[8, 9, 0, 63, 64, 65], [66, 67, 68, 69, 70, 71]], rows: 2, cols: 6)
        #expect(PlainFrame.render(f) == """
            +------+
            |HI roy|
            |gbvwk#|
            +------+

            """)
    }

    @Test func liveCellsAreAddressedOnScreen() {
        let board = ANSIBoard(rows: 6, cols: 22, top: 8)
        let cell = board.cell(Glyph(character: "Q")!, row: 2, col: 4)
        // Border line at 9 (1-based), row 2 at line 12; column 4 starts at 4·3 + 2.
        #expect(cell.contains("\u{1B}[12;14H"))
        #expect(cell.contains(" Q "))
        #expect(cell.hasPrefix("\u{1B}7") && cell.hasSuffix("\u{1B}8"), "the cursor goes back where the logs write")
        let chip = board.cell(Glyph(code: 63)!, row: 0, col: 0)
        #expect(chip.contains("48;2;255;0;0m   "))
        #expect(board.draw(Frame(rows: 6, cols: 22)).components(separatedBy: "\n").count == 9)
    }
}
