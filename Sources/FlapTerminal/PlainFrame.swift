import FlapCore

/// A frame as plain text: a `+----+` border line, one `|…|` line per row of exactly `cols`
/// characters (blanks as spaces, colour chips as r o y g b v w k, `#` for filled), a border line.
/// On a Note (`heart`), code 62 is drawn ❤, as its flap shows it.
public enum PlainFrame {
    public static func render(_ frame: Frame, heart: Bool = false) -> String {
        let border = "+" + String(repeating: "-", count: frame.cols) + "+"
        let lines = [border] + rows(frame, heart: heart).map { "|" + $0 + "|" } + [border]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Each row of a frame as exactly `cols` characters.
    public static func rows(_ frame: Frame, heart: Bool = false) -> [String] {
        (0..<frame.rows).map { r in String((0..<frame.cols).map { character(frame[r, $0], heart: heart) }) }
    }

    /// The single character that stands for a glyph in a plain frame.
    public static func character(_ glyph: Glyph, heart: Bool = false) -> Character {
        if heart, glyph.code == 62 { return "\u{2764}" }
        return glyph.chip?.letter ?? glyph.text.first!
    }
}
