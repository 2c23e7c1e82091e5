/// One unit of message text: a character as typed, or a raw `{NN}` code.
public enum GlyphToken: Hashable, Sendable {
    case character(Character)
    case code(Int)

    /// Splits text into tokens; `{NN}` (one to three digits) is a raw code, any other brace is
    /// an ordinary character.
    public static func parse(_ text: String) -> [GlyphToken] {
        var tokens: [GlyphToken] = []
        tokens.reserveCapacity(text.count)
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if c == "{", let (code, next) = rawCode(in: text, after: i) {
                tokens.append(.code(code))
                i = next
                continue
            }
            tokens.append(.character(c))
            i = text.index(after: i)
        }
        return tokens
    }

    private static func rawCode(in text: String, after brace: String.Index) -> (Int, String.Index)? {
        var j = text.index(after: brace)
        var value = 0
        var digits = 0
        while j < text.endIndex, let d = text[j].wholeNumberValue, text[j].isASCII, digits < 3 {
            value = value * 10 + d
            digits += 1
            j = text.index(after: j)
        }
        guard digits > 0, j < text.endIndex, text[j] == "}" else { return nil }
        return (value, text.index(after: j))
    }

    /// The token as it was written.
    public var text: String {
        switch self {
        case .character(let c): String(c)
        case .code(let n): "{\(n)}"
        }
    }
}
