import FlapCore
/// Renders VBML documents into rows of Vestaboard codes, locally, as Vestaboard's own library
/// lays them out: components flow left to right and wrap below the tallest of their row;
/// `absolutePosition` places a component at (x, y); calendars sit on the top row at their x.
/// What falls outside the board is cut. The result is `height` × `width`: the document's size,
/// else the one given (the board's or zone's).
public enum VBML {
    /// Most components a document may have; largest component side.
    public static let maxComponents = 64
    public static let maxSide = 132

    /// Renders `document`. `seed` chooses the chips of `randomColors` (the same seed, the same
    /// chips: a message looks the same each time it is composed).
    public static func render(_ document: VBMLDocument, rows: Int, cols: Int, seed: UInt64 = 0) throws(VBMLDocument.Problem) -> [[Int]] {
        guard document.components.count <= maxComponents else {
            throw VBMLDocument.Problem("components: \(document.components.count) is more than \(maxComponents)")
        }
        let height = try side(document.style?.height, "style.height") ?? rows
        let width = try side(document.style?.width, "style.width") ?? cols
        var board = [[Int]](repeating: [Int](repeating: 0, count: width), count: height)
        var random = SeededRandom(seed: seed)
        var flow: (top: Int, left: Int, height: Int) = (0, 0, 0)
        var placed: [(grid: [[Int]], x: Int, y: Int, calendar: Bool)] = []
        for (i, component) in document.components.enumerated() {
            let name = "components[\(i)]"
            let kinds = [component.template != nil, component.rawCharacters != nil, component.randomColors != nil,
                         component.calendar != nil].filter { $0 }.count
            guard kinds <= 1 else { throw VBMLDocument.Problem("\(name): give one of template, rawCharacters, randomColors and calendar") }
            let style = component.style ?? VBMLDocument.Style()
            if let calendar = component.calendar {
                let x = style.absolutePosition?.x ?? 0
                guard x >= 0 else { throw VBMLDocument.Problem("\(name).style.absolutePosition.x: \(x) is negative") }
                placed.append((try VBMLCalendar.grid(calendar, component: name).map { Array($0.prefix(13)) }, x, 0, true))
                continue
            }
            let grid = try self.grid(component, style: style, height: height, width: width, props: document.props ?? [:],
                                     random: &random, name: name)
            if let at = style.absolutePosition {
                let x = at.x ?? 0, y = at.y ?? 0
                guard x >= 0, y >= 0 else { throw VBMLDocument.Problem("\(name).style.absolutePosition: (\(x), \(y)) is off the board") }
                placed.append((grid, x, y, false))
                continue
            }
            let gridWidth = grid.first?.count ?? 0
            let newLine = flow.left + gridWidth > width
            let left = newLine ? 0 : flow.left, top = newLine ? flow.top + flow.height : flow.top
            paste(grid, into: &board, x: left, y: top)
            flow = (top, left + gridWidth, grid.count)
        }
        for p in placed where !p.calendar { paste(p.grid, into: &board, x: p.x, y: p.y) }
        for p in placed where p.calendar { paste(p.grid, into: &board, x: p.x, y: p.y) }
        return board
    }

    static func side(_ value: Int?, _ field: String) throws(VBMLDocument.Problem) -> Int? {
        guard let value else { return nil }
        guard (1...maxSide).contains(value) else { throw VBMLDocument.Problem("\(field): \(value) is not 1–\(maxSide)") }
        return value
    }

    static func grid(_ component: VBMLDocument.Component, style: VBMLDocument.Style, height boardHeight: Int, width boardWidth: Int,
                     props: [String: VBMLValue], random: inout SeededRandom, name: String) throws(VBMLDocument.Problem) -> [[Int]] {
        if let raw = component.rawCharacters?.rows {
            guard let first = raw.first, !first.isEmpty else { throw VBMLDocument.Problem("\(name).rawCharacters: no rows of codes") }
            guard raw.count <= maxSide, raw.allSatisfy({ $0.count <= maxSide }) else {
                throw VBMLDocument.Problem("\(name).rawCharacters: larger than \(maxSide) × \(maxSide)")
            }
            for (r, row) in raw.enumerated() {
                for (c, code) in row.enumerated() where Glyph(code: code) == nil {
                    throw VBMLDocument.Problem("\(name).rawCharacters[\(r)][\(c)]: \(code) is not a Vestaboard character code")
                }
            }
            return raw
        }
        let width = try side(style.width, "\(name).style.width") ?? boardWidth
        let height = try side(style.height, "\(name).style.height") ?? boardHeight
        if let colours = component.randomColors {
            let codes = colours.colors ?? Array(63...70)
            guard !codes.isEmpty, codes.allSatisfy({ Glyph(code: $0) != nil }) else {
                throw VBMLDocument.Problem("\(name).randomColors.colors: give Vestaboard character codes to draw from")
            }
            return (0..<height).map { _ in (0..<width).map { _ in codes[Int(random.next() % UInt64(codes.count))] } }
        }
        var text = VBMLCharacters.replacingEmoji(component.template ?? "")
        text = try VBMLTemplate.fill(text, props: props, component: name)
        text = VBMLCharacters.sanitized(text)
        return try VBMLText.render(text, width: width, height: height, justify: style.justify ?? .left,
                                   align: style.align ?? .top, component: name)
    }

    static func paste(_ grid: [[Int]], into board: inout [[Int]], x: Int, y: Int) {
        for (r, row) in grid.enumerated() where y + r < board.count {
            for (c, code) in row.enumerated() where x + c < board[y + r].count { board[y + r][x + c] = code }
        }
    }
}
