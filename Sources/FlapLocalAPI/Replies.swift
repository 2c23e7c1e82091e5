import FlapBoard
import FlapCore

/// What the local API and the page answer, as types. Each encodes (`LocalAPI.json`) to the JSON
/// the README documents: keys in code-point order, a value a reply does not have left out —
/// except where the README gives it as `null`.
enum LocalReply {
    /// `POST /local-api/message`, accepted: the frame the board (or grid) is going to, its
    /// transition's number and flips, and what was cut or substituted, when anything was.
    struct Accepted: Encodable {
        var message: [[Int]]
        var transition: Int
        var flips: Int
        var cut: [String]?
        var substitutions: [String]?
    }

    /// `POST /local-api/message` in quiet hours: kept until they end (`until`, null when no end
    /// is known).
    struct Held: Encodable {
        var until: Double?
        enum CodingKeys: String, CodingKey { case held, until, note }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode("quiet hours", forKey: .held)
            try c.encode(until, forKey: .until)
            try c.encode("kept; it shows when the quiet hours end (send it with \"forced\": true to show it now)", forKey: .note)
        }
    }

    /// `POST /local-api/preview`: the local sender's zone as the message would draw it.
    struct Preview: Encodable {
        var message: [[Int]]
        var cut: [String]
        var substitutions: [String]
        var rows: Int
        var cols: Int
    }

    /// `POST /quiet`: quiet hours as they stand (`until` and `switched` null when not known or
    /// not switched by hand).
    struct Quiet: Encodable {
        var active: Bool
        var until: Double?
        var switched: Bool?
        enum CodingKeys: String, CodingKey { case quiet }
        enum StateKeys: String, CodingKey { case active, until, switched }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            var q = c.nestedContainer(keyedBy: StateKeys.self, forKey: .quiet)
            try q.encode(active, forKey: .active)
            try q.encode(until, forKey: .until)
            try q.encode(switched, forKey: .switched)
        }
    }

    /// The page's `hello` event: every board (size, flip time, what it shows now), the grids,
    /// the local API's board, the glyph of each code, and the monotonic clock (ms).
    struct Hello: Encodable {
        struct Board: Encodable {
            var id: String
            var rows: Int
            var cols: Int
            var heart: Bool
            var output: String
            var flip_ms: Double
            var codes: [[Int]]
            var moving: Bool
        }
        struct Grid: Encodable {
            var id: String
            var boards: [[Int]]
        }
        struct Local: Encodable {
            var board: String
            var rows: Int
            var cols: Int
        }
        /// `[code, text, chip colour]`: a letter's text and a null colour, or "" and a colour.
        struct GlyphRow: Encodable {
            var code: Int
            var text: String
            var colour: String?
            func encode(to encoder: any Encoder) throws {
                var c = encoder.unkeyedContainer()
                try c.encode(code)
                try c.encode(text)
                try c.encode(colour)
            }
        }
        var boards: [Board]
        var grids: [Grid]
        var local: Local
        var glyphs: [GlyphRow]
        var now: Double
    }

    /// The page's `flips` event: `[board, row, col, code, planned ms, actual ms, transition]`
    /// a flip, instants on the monotonic clock, and the clock now.
    struct Flips: Encodable {
        struct Row: Encodable {
            var board: Int, row: Int, col: Int, code: Int
            var planned: Double, actual: Double
            var transition: Int
            func encode(to encoder: any Encoder) throws {
                var c = encoder.unkeyedContainer()
                try c.encode(board); try c.encode(row); try c.encode(col); try c.encode(code)
                try c.encode(planned); try c.encode(actual); try c.encode(transition)
            }
        }
        var now: Double
        var flips: [Row]
    }

    /// The page's `settled` event: a board at rest, and what it shows.
    struct Settled: Encodable {
        var board: Int
        var transition: Int
        var codes: [[Int]]
    }
}
