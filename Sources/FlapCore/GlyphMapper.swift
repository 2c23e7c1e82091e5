import Foundation

/// Turns what a message says into glyphs that a given drum carries. Never fails: a token the
/// drum cannot show becomes, in this order, its upper case, its configured substitute, a built-in
/// look-alike (typographic quotes and dashes, letters without their accents), then the fallback.
public struct GlyphMapper: Sendable {
    public let drum: Drum
    /// Configured substitutes, keyed by the character or `{NN}` code as written.
    public let substitutes: [String: Glyph]
    /// What a token becomes when nothing else fits; always on the drum.
    public let fallback: Glyph

    /// A mapper for this drum. A fallback that is not on the drum is replaced by the drum's
    /// first flap.
    public init(drum: Drum, substitutes: [String: Glyph] = [:], fallback: Glyph = .blank) {
        self.drum = drum
        self.substitutes = substitutes
        self.fallback = drum.contains(fallback) ? fallback : drum.glyphs[0]
    }

    /// The glyph to show for a token, and the substitution made when it is not the token itself.
    public func map(_ token: GlyphToken) -> (glyph: Glyph, substitution: Substitution?) {
        // Candidates in order, each computed only when the ones before it do not fit (folding
        // accents is costly); the first two are the token itself, no substitution.
        let candidates: [() -> Glyph?]
        switch token {
        case .code(let n):
            candidates = [{ Glyph(code: n) }, { nil }, { substitutes[token.text] }]
        case .character(let c):
            let upper: () -> Character? = {
                let up = String(c).uppercased()
                return up.count == 1 ? up.first : nil
            }
            candidates = [{ Glyph(character: c) }, { upper().flatMap { Glyph(character: $0) } },
                          { substitutes[String(c)] }, { upper().flatMap { substitutes[String($0)] } },
                          { GlyphMapper.lookAlike[c] }, { GlyphMapper.folded(c) }]
        }
        for (i, candidate) in candidates.enumerated() {
            if let glyph = candidate(), drum.contains(glyph) {
                return (glyph, i < 2 ? nil : Substitution(original: token.text, shown: glyph))
            }
        }
        return (fallback, Substitution(original: token.text, shown: fallback))
    }

    /// Built-in look-alikes for characters people type that no table has.
    static let lookAlike: [Character: Glyph] = {
        let pairs: [(Character, Character)] = [
            ("\u{201C}", "\""), ("\u{201D}", "\""), ("\u{201E}", "\""), ("\u{2018}", "'"),
            ("\u{2019}", "'"), ("\u{2013}", "-"), ("\u{2014}", "-"), ("\u{2026}", "."),
            ("\u{00B4}", "'"), ("`", "'"), ("_", "-"), ("*", "+"), ("\u{00D7}", "+"),
            ("[", "("), ("]", ")"), ("<", "("), (">", ")"), ("\t", " "),
        ]
        var m: [Character: Glyph] = [:]
        for (from, to) in pairs { m[from] = Glyph(character: to)! }
        for heart in ["\u{2764}", "\u{2764}\u{FE0F}", "\u{2665}", "\u{2661}"] { m[Character(heart)] = Glyph(code: 62)! }
        return m
    }()

    /// The letter without its accents (é → E), when that is a glyph.
    static func folded(_ c: Character) -> Glyph? {
        let base = String(c).folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).uppercased()
        guard base.count == 1, let ch = base.first else { return nil }
        return Glyph(character: ch)
    }
}

/// A token that a board showed as another glyph.
public struct Substitution: Hashable, Sendable, CustomStringConvertible {
    /// The character or `{NN}` code as the message wrote it.
    public let original: String
    /// The glyph shown instead.
    public let shown: Glyph

    public var description: String { "'\(original)' shown as '\(shown.text)'" }
}
