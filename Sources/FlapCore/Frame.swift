/// What a board (or a rectangle of it) shows: rows × cols glyphs, row-major.
public struct Frame: Hashable, Sendable {
    public let rows: Int
    public let cols: Int
    public private(set) var glyphs: [Glyph]

    /// A frame of one glyph everywhere (blank by default).
    public init(rows: Int, cols: Int, filledWith glyph: Glyph = .blank) {
        self.rows = rows
        self.cols = cols
        self.glyphs = Array(repeating: glyph, count: rows * cols)
    }

    /// A frame from rows of Vestaboard codes, as the local API takes them. Fails, naming the
    /// place, on wrong dimensions or a code that the table does not define.
    public init(codes: [[Int]], rows: Int, cols: Int) throws(FrameError) {
        guard codes.count == rows else { throw .wrongRowCount(codes.count, expected: rows) }
        self.init(rows: rows, cols: cols)
        for (r, line) in codes.enumerated() {
            guard line.count == cols else { throw .wrongColumnCount(row: r, line.count, expected: cols) }
            for (c, code) in line.enumerated() {
                guard let g = Glyph(code: code) else { throw .unknownCode(code, row: r, col: c) }
                glyphs[r * cols + c] = g
            }
        }
    }

    public subscript(row: Int, col: Int) -> Glyph {
        get { glyphs[row * cols + col] }
        set { glyphs[row * cols + col] = newValue }
    }

    /// The frame as rows of Vestaboard codes.
    public var codes: [[Int]] {
        (0..<rows).map { r in (0..<cols).map { c in Int(self[r, c].code) } }
    }
}

/// Why codes did not make a frame.
public enum FrameError: Error, Equatable, CustomStringConvertible {
    case wrongRowCount(Int, expected: Int)
    case wrongColumnCount(row: Int, Int, expected: Int)
    case unknownCode(Int, row: Int, col: Int)

    public var description: String {
        switch self {
        case .wrongRowCount(let n, let e): "expected \(e) rows, got \(n)"
        case .wrongColumnCount(let r, let n, let e): "row \(r) has \(n) columns, expected \(e)"
        case .unknownCode(let code, let r, let c): "unknown code \(code) at row \(r), column \(c)"
        }
    }
}
