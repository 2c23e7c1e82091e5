/// Where text sits horizontally in its rectangle.
public enum HorizontalAlignment: String, Sendable, CaseIterable { case left, center, right }
/// Where the block of lines sits vertically in its rectangle.
public enum VerticalAlignment: String, Sendable, CaseIterable { case top, center, bottom }

/// Lays text out on a rectangle of modules: upper case, word wrap, explicit newlines, words
/// longer than a line broken, alignment (center / center unless told otherwise, as the
/// Vestaboard text API does). Runs of spaces separate words and fold into one.
public struct Layout: Hashable, Sendable {
    public var horizontal: HorizontalAlignment
    public var vertical: VerticalAlignment

    public init(horizontal: HorizontalAlignment = .center, vertical: VerticalAlignment = .center) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    /// What a layout produced, and what it had to change.
    public struct Result: Sendable {
        public var frame: Frame
        /// Lines that did not fit in the rows and were cut, as text.
        public var cut: [String]
        /// Tokens shown as another glyph, once each, in order of first use.
        public var substitutions: [Substitution]
    }

    public func place(_ text: String, rows: Int, cols: Int, mapper: GlyphMapper) -> Result {
        var substitutions: [Substitution] = []
        var lines: [[Glyph]] = []
        for paragraph in GlyphLines.split(GlyphToken.parse(text)) {
            let words = paragraph.split(separator: .character(" "), omittingEmptySubsequences: true).map { word in
                word.map { token in
                    let (glyph, sub) = mapper.map(token)
                    if let sub, !substitutions.contains(sub) { substitutions.append(sub) }
                    return glyph
                }
            }
            lines += GlyphLines.wrap(words, width: cols)
        }
        while lines.count > rows, lines.last?.allSatisfy({ $0 == .blank }) == true { lines.removeLast() }
        let cut = lines.count > rows ? lines[rows...].map { String($0.map(\.text).joined()) } : []
        lines = Array(lines.prefix(rows))

        var frame = Frame(rows: rows, cols: cols)
        let top = switch vertical {
        case .top: 0
        case .center: (rows - lines.count) / 2
        case .bottom: rows - lines.count
        }
        for (i, line) in lines.enumerated() {
            let left = switch horizontal {
            case .left: 0
            case .center: (cols - line.count) / 2
            case .right: cols - line.count
            }
            for (j, g) in line.enumerated() { frame[top + i, left + j] = g }
        }
        return Result(frame: frame, cut: cut, substitutions: substitutions)
    }
}

enum GlyphLines {
    /// Paragraphs at explicit newlines (`\n`, `\r\n` counts as one).
    static func split(_ tokens: [GlyphToken]) -> [ArraySlice<GlyphToken>] {
        if tokens.isEmpty { return [] }
        return tokens.split(omittingEmptySubsequences: false) { t in
            t == .character("\n") || t == .character("\r\n") || t == .character("\r")
        }
    }

    /// Greedy word wrap; a word longer than the width is broken across lines of its own.
    static func wrap(_ words: [[Glyph]], width: Int) -> [[Glyph]] {
        var lines: [[Glyph]] = []
        var current: [Glyph] = []
        for var word in words {
            if word.count > width {
                if !current.isEmpty { lines.append(current); current = [] }
                while word.count > width {
                    lines.append(Array(word.prefix(width)))
                    word.removeFirst(width)
                }
                current = word
            } else if current.isEmpty {
                current = word
            } else if current.count + 1 + word.count <= width {
                current.append(.blank)
                current += word
            } else {
                lines.append(current)
                current = word
            }
        }
        if !current.isEmpty || lines.isEmpty { lines.append(current) }
        return lines
    }
}
