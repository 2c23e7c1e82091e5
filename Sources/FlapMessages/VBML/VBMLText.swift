import FlapCore
/// How VBML lays a template's text out in a component: words (a space, a `{NN}` code and a line
/// break are words of their own), wrapped at the width, then aligned.
enum VBMLText {
    typealias Scalars = [Unicode.Scalar]

    /// The component's rows of codes, `height` × `width`.
    static func render(_ text: String, width: Int, height: Int, justify: VBMLDocument.Justify, align: VBMLDocument.Align,
                       component: String) throws(VBMLDocument.Problem) -> [[Int]] {
        var lines: [[Int]] = []
        for line in self.lines(words(Array(text.unicodeScalars), width: width), width: width) {
            lines.append(try VBMLCharacters.lineCodes(line, component: component))
        }
        let rows = horizontal(vertical(lines, height: height, align: align), width: width, justify: justify)
        return (0..<height).map { r in
            (0..<width).map { c in r < rows.count && c < rows[r].count ? rows[r][c] : 0 }
        }
    }

    static func isCode(_ word: Scalars) -> Bool { word.first == "{" && word.last == "}" }

    /// Splits text into words: every space becomes the word `{0}`; `{…}` (closed on its line) is
    /// a word; a line break is a word; the rest is cut into pieces no wider than the component.
    static func words(_ text: Scalars, width: Int) -> [Scalars] {
        var spaced: Scalars = []
        for s in text { if s == " " { spaced += "{0}".unicodeScalars } else { spaced.append(s) } }
        var words: [Scalars] = []
        var plain: Scalars = []
        func flushPlain() {
            var start = 0
            while start < plain.count {
                words.append(Array(plain[start..<min(start + max(width, 1), plain.count)]))
                start += max(width, 1)
            }
            plain = []
        }
        var i = 0
        while i < spaced.count {
            let s = spaced[i]
            if s == "{", let close = spaced[(i + 1)...].firstIndex(where: { $0 == "}" || $0 == "\n" }), spaced[close] == "}" {
                flushPlain()
                words.append(Array(spaced[i...close]))
                i = close + 1
            } else if s == "\n" {
                flushPlain()
                words.append(["\n"])
                i += 1
            } else {
                plain.append(s)
                i += 1
            }
        }
        flushPlain()
        return words
    }

    /// Wraps words into lines no wider than `width` (a code counts one). A line break ends a
    /// line; two make a blank one; a space that would begin a wrapped line is dropped.
    static func lines(_ words: [Scalars], width: Int) -> [Scalars] {
        var lines: [(line: Scalars, length: Int)] = [([], 0)]
        for (index, word) in words.enumerated() {
            let last = lines[lines.count - 1]
            if word == ["\n"] {
                if index > 0, words[index - 1] == ["\n"] { lines.append(([], 0)) } else { lines[lines.count - 1].length = width }
                continue
            }
            if isCode(word) {
                if last.length + 1 > width {
                    if word != Array("{0}".unicodeScalars) { lines.append((word, 1)) }
                } else {
                    lines[lines.count - 1] = (last.line + word, last.length + 1)
                }
                continue
            }
            if width >= word.count + last.length, !last.line.isEmpty {
                lines[lines.count - 1] = (last.line + word, last.length + word.count)
            } else {
                lines.append((word, word.count))
            }
        }
        return (lines[0].line.isEmpty ? lines.dropFirst() : lines[...]).map(\.line)
    }

    static func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// Places the lines in the component's height. Text taller than the component shows its
    /// first lines whatever the alignment (as Vestaboard's library does since 2024).
    static func vertical(_ lines: [[Int]], height: Int, align: VBMLDocument.Align) -> [[Int]] {
        let n = lines.count
        let top: Int
        switch align {
        case .top: return lines
        case .bottom: top = height - n
        case .justified: top = max(0, -floorDiv(n - height, 2))
        case .center, .absolute: top = max(0, floorDiv(height - n, 2))
        }
        return (0..<height).map { i in i - top >= 0 && i - top < n ? lines[i - top] : [] }
    }

    static func trimmedLeading(_ row: [Int]) -> [Int] { Array(row.drop { $0 == 0 }) }
    static func trimmedTrailing(_ row: [Int]) -> [Int] { Array(row.reversed().drop { $0 == 0 }.reversed()) }

    /// Places each line in the component's width.
    static func horizontal(_ lines: [[Int]], width: Int, justify: VBMLDocument.Justify) -> [[Int]] {
        func shifted(_ row: [Int], by pad: Int) -> [Int] {
            (0..<width).map { i in i - pad >= 0 && i - pad < row.count ? row[i - pad] : 0 }
        }
        switch justify {
        case .left: return lines.map(trimmedLeading)
        case .right: return lines.map { row in let r = trimmedTrailing(row); return shifted(r, by: width - r.count) }
        case .center: return lines.map { row in let r = trimmedTrailing(row); return shifted(r, by: floorDiv(width - r.count, 2)) }
        case .justified:
            let rows = lines.map(trimmedLeading)
            let longest = (rows.map(\.count).max() ?? 0) - 1
            let right = floorDiv(width - longest, 2)
            let pad = min(right, width - (longest + right + 1))
            return rows.map { shifted($0, by: pad) }
        }
    }
}
