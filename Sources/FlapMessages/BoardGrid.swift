import FlapCore
/// Several boards addressed as one grid (a wall of Notes, say): boards side by side in rows,
/// each row of boards equally tall and each column equally wide. A zone on a grid covers
/// modules of several boards; `pieces` says which.
public struct BoardGrid: Hashable, Sendable {
    public let id: String
    /// Board indexes, row by row of the wall.
    public let boards: [[Int]]
    /// Its size in modules.
    public let rows: Int
    public let cols: Int
    /// Each board's top-left module, in the grid.
    public let origins: [Int: Origin]

    public struct Origin: Hashable, Sendable { public var row: Int; public var col: Int; public var rows: Int; public var cols: Int }

    /// Why boards do not make a grid.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible { public var description: String }

    /// - Parameter size: each board's rows and columns, by index.
    public init(id: String, boards: [[Int]], size: (Int) -> (rows: Int, cols: Int), name: (Int) -> String) throws(Problem) {
        guard let first = boards.first, !first.isEmpty, boards.allSatisfy({ $0.count == first.count }) else {
            throw Problem(description: "expected rows of board ids, every row as long as the first")
        }
        let all = boards.joined()
        guard Set(all).count == all.count else { throw Problem(description: "a board appears twice") }
        var origins: [Int: Origin] = [:]
        var top = 0
        for row in boards {
            let height = size(row[0]).rows
            var left = 0
            for (c, b) in row.enumerated() {
                let s = size(b)
                guard s.rows == height else {
                    throw Problem(description: "'\(name(b))' has \(s.rows) rows, '\(name(row[0]))' beside it \(height): boards side by side must be as tall")
                }
                let width = size(boards[0][c]).cols
                guard s.cols == width else {
                    throw Problem(description: "'\(name(b))' has \(s.cols) columns, '\(name(boards[0][c]))' above it \(width): boards one above the other must be as wide")
                }
                origins[b] = Origin(row: top, col: left, rows: s.rows, cols: s.cols)
                left += s.cols
            }
            top += height
        }
        self.id = id
        self.boards = boards
        self.rows = top
        self.cols = first.reduce(0) { $0 + size($1).cols }
        self.origins = origins
    }

    /// The parts of a rectangle of the grid on each board it covers, in board order.
    public func pieces(rows: Range<Int>, cols: Range<Int>) -> [Zone.Piece] {
        boards.joined().compactMap { b in
            let o = origins[b]!
            let r = rows.clamped(to: o.row..<(o.row + o.rows)), c = cols.clamped(to: o.col..<(o.col + o.cols))
            guard !r.isEmpty, !c.isEmpty else { return nil }
            return Zone.Piece(board: b, rows: (r.lowerBound - o.row)..<(r.upperBound - o.row), cols: (c.lowerBound - o.col)..<(c.upperBound - o.col),
                              partRow: r.lowerBound - rows.lowerBound, partCol: c.lowerBound - cols.lowerBound)
        }
    }
}
