/// The ordered flaps of one module's drum. A physical drum turns forward only, so the order
/// decides how many flips every change takes.
public struct Drum: Hashable, Sendable {
    /// The flaps in drum order; index 0 is the home flap.
    public let glyphs: [Glyph]
    /// Drum index of each code, or -1 when the code is not on this drum.
    private let indexOfCode: [Int8]

    /// A drum of these glyphs; fails on an empty list, more than 72 flaps or a repeated glyph.
    public init(_ glyphs: [Glyph]) throws(DrumError) {
        guard !glyphs.isEmpty else { throw .empty }
        var table = [Int8](repeating: -1, count: 72)
        for (i, g) in glyphs.enumerated() {
            guard table[Int(g.code)] < 0 else { throw .repeated(g.text) }
            table[Int(g.code)] = Int8(i)
        }
        self.glyphs = glyphs
        self.indexOfCode = table
    }

    /// A drum written as glyph text, e.g. `" ABC{63}{64}"`: each character or `{NN}` is a flap.
    public init(spec: String) throws(DrumError) {
        var glyphs: [Glyph] = []
        for token in GlyphToken.parse(spec) {
            let glyph: Glyph? = switch token {
            case .character(let c): Glyph(character: c)
            case .code(let n): Glyph(code: n)
            }
            guard let glyph else { throw .unknownGlyph(token.text) }
            glyphs.append(glyph)
        }
        try self.init(glyphs)
    }

    /// The number of flaps.
    public var count: Int { glyphs.count }

    /// The drum index of a glyph, or nil when the drum does not carry it.
    @inline(__always)
    public func index(of glyph: Glyph) -> Int? {
        let i = indexOfCode[Int(glyph.code)]
        return i < 0 ? nil : Int(i)
    }

    public func contains(_ glyph: Glyph) -> Bool { indexOfCode[Int(glyph.code)] >= 0 }

    /// The seed's standard 40-flap set: blank, A–Z, 0–9, `!`, `?`, `+`.
    public static let standard = try! Drum(spec: " ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?+")

    /// Every glyph of the Vestaboard table: blank, A–Z, 0–9, the symbols in code order, then the
    /// nine colour chips (66 flaps).
    public static let extended: Drum = {
        let head = " ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        var glyphs = head.map { Glyph(character: $0)! }
        glyphs += Glyph.all.filter { g in g.chip == nil && !head.contains(Glyph.table[Int(g.code)]!) }
        glyphs += ColorChip.allCases.map { Glyph(unchecked: $0.rawValue) }
        return try! Drum(glyphs)
    }()

    /// The 52-flap drum of the open splitflap design (v2); its colour flaps g r y p w are the
    /// chips green, red, yellow, violet and white.
    public static let splitflap52 = try! Drum(
        spec: " ABCDEFGHIJKLMNOPQRSTUVWXYZ{66}0123456789{63}.?-$'#{65}{68},!@&{69}")

    /// The legacy 40-flap drum of the open splitflap design.
    public static let splitflap40 = try! Drum(spec: " ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,'")

    /// The drums that a config may name.
    public static let named: [String: Drum] = [
        "standard": .standard, "extended": .extended,
        "splitflap52": .splitflap52, "splitflap40": .splitflap40,
    ]
}

/// Why a drum could not be made.
public enum DrumError: Error, Equatable, CustomStringConvertible {
    case empty
    case repeated(String)
    case unknownGlyph(String)

    public var description: String {
        switch self {
        case .empty: "a drum needs at least one flap"
        case .repeated(let g): "the flap '\(g)' appears twice"
        case .unknownGlyph(let g): "'\(g)' is not a glyph of the Vestaboard table"
        }
    }
}
