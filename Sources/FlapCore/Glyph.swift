/// One character a module can show: a Vestaboard character code (0…71).
///
/// Every drum in the project, whatever its maker, is a list of these codes, so that text, raw
/// `{NN}` codes and colour chips mean the same thing on every board.
public struct Glyph: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The Vestaboard character code.
    public let code: UInt8

    /// A glyph for a code the Vestaboard table defines, or nil (43, 45, 51, 57, 58, 61 and > 71).
    public init?(code: Int) {
        guard (0...71).contains(code), Glyph.table[code] != nil else { return nil }
        self.code = UInt8(code)
    }

    init(unchecked code: UInt8) { self.code = code }

    /// The blank flap (code 0).
    public static let blank = Glyph(unchecked: 0)

    /// The glyph whose text is this single character (upper case letters, digits, the table's
    /// symbols, space for blank), or nil.
    public init?(character: Character) {
        guard let code = Glyph.codeOfCharacter[character] else { return nil }
        self.code = code
    }

    /// The colour of a colour chip (codes 63…71), nil for a character.
    public var chip: ColorChip? { ColorChip(rawValue: code) }

    /// Text that reads back as this glyph: the character itself, or `{NN}` for a colour chip.
    public var text: String {
        if chip != nil { return "{\(code)}" }
        return String(Glyph.table[Int(code)]!)
    }

    public var description: String { text }

    public static func < (a: Glyph, b: Glyph) -> Bool { a.code < b.code }

    /// Every defined glyph, in code order.
    public static let all: [Glyph] = (0...71).compactMap { Glyph(code: $0) }

    /// The character of each code; colour chips stand as a placeholder here.
    static let table: [Character?] = {
        var t = [Character?](repeating: nil, count: 72)
        t[0] = " "
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZ".enumerated() { t[1 + i] = c }
        for (i, c) in "123456789".enumerated() { t[27 + i] = c }
        t[36] = "0"
        let symbols: [(Int, Character)] = [
            (37, "!"), (38, "@"), (39, "#"), (40, "$"), (41, "("), (42, ")"), (44, "-"),
            (46, "+"), (47, "&"), (48, "="), (49, ";"), (50, ":"), (52, "'"), (53, "\""),
            (54, "%"), (55, ","), (56, "."), (59, "/"), (60, "?"), (62, "°"),
        ]
        for (code, c) in symbols { t[code] = c }
        for code in 63...71 { t[code] = "\u{25A0}" }
        return t
    }()

    static let codeOfCharacter: [Character: UInt8] = {
        var m: [Character: UInt8] = [:]
        for code in 0..<63 { if let c = table[code] { m[c] = UInt8(code) } }
        return m
    }()
}

/// The colour chips of the Vestaboard table (codes 63…71).
public enum ColorChip: UInt8, CaseIterable, Sendable {
    case red = 63, orange, yellow, green, blue, violet, white, black, filled

    /// One letter per colour for plain-text frames: r o y g b v w k, and `#` for filled.
    public var letter: Character {
        switch self {
        case .red: "r"
        case .orange: "o"
        case .yellow: "y"
        case .green: "g"
        case .blue: "b"
        case .violet: "v"
        case .white: "w"
        case .black: "k"
        case .filled: "#"
        }
    }

    /// The colour as 24-bit RGB, from the seed's palette (§4.2.3); `filled` is the white flap.
    public var rgb: (r: UInt8, g: UInt8, b: UInt8) {
        switch self {
        case .red: (0xFF, 0x00, 0x00)
        case .orange: (0xFF, 0x66, 0x00)
        case .yellow: (0xFF, 0xCC, 0x00)
        case .green: (0x00, 0xCC, 0x00)
        case .blue: (0x00, 0x66, 0xFF)
        case .violet: (0x66, 0x00, 0xCC)
        case .white, .filled: (0xFF, 0xFF, 0xFF)
        case .black: (0x00, 0x00, 0x00)
        }
    }
}
