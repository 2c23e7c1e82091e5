import FlapCore

/// Escape sequences that draw a board at the top of a terminal, one 3-column cell per module,
/// and update single cells in place. Pure: it returns bytes; `VirtualBoard` writes them.
struct ANSIBoard {
    let rows: Int
    let cols: Int
    /// Screen line (0-based) of the board's top border.
    let top: Int
    /// Code 62 drawn ❤ (a Note).
    var heart = false

    /// Screen lines the board takes, borders included.
    var height: Int { rows + 2 }

    private static let esc = "\u{1B}["
    private static let frameColour = "\u{1B}[38;2;70;70;70m\u{1B}[48;2;8;8;8m"

    /// Draws the border and every cell at the board's place on the screen.
    func draw(_ frame: Frame) -> String {
        var out = "\(Self.esc)\(top + 1);1H"
        let bar = String(repeating: "\u{2500}", count: cols * 3)
        out += Self.frameColour + "\u{256D}" + bar + "\u{256E}\(Self.esc)0m\n"
        for r in 0..<rows {
            out += Self.frameColour + "\u{2502}"
            for c in 0..<cols { out += cellBody(frame[r, c], row: r, col: c) }
            out += Self.frameColour + "\u{2502}\(Self.esc)0m\n"
        }
        out += Self.frameColour + "\u{2570}" + bar + "\u{256F}\(Self.esc)0m\n"
        return out
    }

    /// Clears the screen and confines later output (logs) to the lines below `reserved` lines.
    static func reserve(_ reserved: Int, terminalHeight: Int) -> String {
        var out = "\(esc)2J"
        if terminalHeight > reserved + 1 { out += "\(esc)\(reserved + 1);\(terminalHeight)r" }
        return out
    }

    /// Gives the whole screen back to the terminal, cursor below `reserved` lines.
    static func release(_ reserved: Int) -> String { "\(esc)r\(esc)\(reserved + 1);1H\(esc)0m" }

    /// Redraws one cell, keeping the cursor where the logs write.
    func cell(_ glyph: Glyph, row: Int, col: Int) -> String {
        "\u{1B}7\(Self.esc)\(top + row + 2);\(col * 3 + 2)H" + cellBody(glyph, row: row, col: col) + "\(Self.esc)0m\u{1B}8"
    }

    private func cellBody(_ glyph: Glyph, row: Int, col: Int) -> String {
        if let chip = glyph.chip {
            let (r, g, b) = chip.rgb
            return "\(Self.esc)48;2;\(r);\(g);\(b)m   "
        }
        // Neighbouring modules alternate two dark greys so that each flap reads on its own.
        let shade = (row + col) % 2 == 0 ? 28 : 36
        return "\(Self.esc)48;2;\(shade);\(shade);\(shade)m\(Self.esc)1;38;2;245;245;245m \(PlainFrame.character(glyph, heart: heart)) "
    }
}
