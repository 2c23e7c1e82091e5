import FlapCore
import Foundation

/// Composes what each zone shows into its board's frame: the sender's name on the first row
/// when the zone asks, then the text laid out on the rest of the zone (or a pattern of codes
/// placed from its top-left). A zone with no message is blank.
public struct Composer: Sendable {
    public init() {}

    /// What composing one zone produced.
    public struct Part: Sendable {
        public var frame: Frame
        /// Lines that did not fit the zone.
        public var cut: [String]
        public var substitutions: [Substitution]
        /// Why a pattern could not be read, if it could not (the zone is then blank).
        public var problem: String?
    }

    /// The zone's rectangle for one message (or blank for none).
    public func compose(_ message: InboxMessage?, in zone: Zone, mapper: GlyphMapper) -> Part {
        let rows = zone.rows.count, cols = zone.cols.count
        guard let message else {
            return Part(frame: Frame(rows: rows, cols: cols, filledWith: mapper.drum.glyphs[0]), cut: [], substitutions: [])
        }
        var frame = Frame(rows: rows, cols: cols)
        var substitutions: [Substitution] = []
        var top = 0
        if zone.nameLine, rows > 1 {
            let name = Layout(horizontal: zone.layout.horizontal, vertical: .top)
                .place(message.senderName, rows: 1, cols: cols, mapper: mapper)
            frame.paste(name.frame, row: 0, col: 0)
            substitutions += name.substitutions
            top = 1
        }
        var cut: [String] = []
        var problem: String?
        switch message.contentType {
        case .text:
            let body = zone.layout.place(message.content, rows: rows - top, cols: cols, mapper: mapper)
            frame.paste(body.frame, row: top, col: 0)
            cut = body.cut
            for s in body.substitutions where !substitutions.contains(s) { substitutions.append(s) }
        case .pattern:
            switch PatternCodes.parse(message.content) {
            case .success(let codes):
                substitutions += place(codes, on: &frame, top: top, mapper: mapper, already: substitutions)
                if codes.count > rows - top || codes.contains(where: { $0.count > cols }) {
                    cut = ["pattern of \(codes.count) rows × \(codes.map(\.count).max() ?? 0) columns cropped to \(rows - top) × \(cols)"]
                }
            case .failure(let error):
                problem = error.description
            }
        case .vbml:
            do throws(VBMLDocument.Problem) {
                let document = try VBMLDocument.decode(Data(message.content.utf8))
                let codes = try VBML.render(document, rows: rows - top, cols: cols, seed: Self.seed(message.id))
                substitutions += place(codes, on: &frame, top: top, mapper: mapper, already: substitutions)
                if codes.count > rows - top || codes.contains(where: { $0.count > cols }) {
                    cut = ["VBML of \(codes.count) rows × \(codes.map(\.count).max() ?? 0) columns cropped to \(rows - top) × \(cols)"]
                }
            } catch {
                problem = "VBML: \(error.description)"
            }
        }
        return Part(frame: frame, cut: cut, substitutions: substitutions, problem: problem)
    }

    /// Places rows of codes from the frame's row `top`, cropping; returns the new substitutions.
    private func place(_ codes: [[Int]], on frame: inout Frame, top: Int, mapper: GlyphMapper, already: [Substitution]) -> [Substitution] {
        var added: [Substitution] = []
        for (r, line) in codes.prefix(frame.rows - top).enumerated() {
            for (c, code) in line.prefix(frame.cols).enumerated() {
                let (glyph, sub) = mapper.map(.code(code))
                frame[top + r, c] = glyph
                if let sub, !already.contains(sub), !added.contains(sub) { added.append(sub) }
            }
        }
        return added
    }

    /// A message's own seed (FNV-1a of its id), so that its random chips stay the same.
    static func seed(_ id: String) -> UInt64 {
        id.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}

extension Frame {
    /// The `rows` × `cols` part of this frame from (row, col).
    public func cropped(row: Int, col: Int, rows: Int, cols: Int) -> Frame {
        var part = Frame(rows: rows, cols: cols)
        for r in 0..<rows where row + r < self.rows {
            for c in 0..<cols where col + c < self.cols { part[r, c] = self[row + r, col + c] }
        }
        return part
    }

    /// Copies another frame onto this one with its top-left at (row, col), cropping what falls
    /// outside.
    public mutating func paste(_ part: Frame, row: Int, col: Int) {
        for r in 0..<part.rows where row + r < rows {
            for c in 0..<part.cols where col + c < cols { self[row + r, col + c] = part[r, c] }
        }
    }
}

/// Reads a pattern: a JSON array of rows, each an array of Vestaboard codes 0…71.
public enum PatternCodes {
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// Writes rows of codes as a pattern `parse` reads back.
    public static func text(_ codes: [[Int]]) -> String {
        "[" + codes.map { "[" + $0.map(String.init).joined(separator: ",") + "]" }.joined(separator: ",") + "]"
    }

    public static func parse(_ text: String) -> Result<[[Int]], Problem> {
        var rows: [[Int]] = []
        var row: [Int]?
        var number: Int?
        var depth = 0
        var ended = false
        for (offset, ch) in text.enumerated() {
            switch ch {
            case "[":
                depth += 1
                guard depth <= 2 else { return .failure(Problem(description: "pattern nests deeper than rows of codes at character \(offset + 1)")) }
                if depth == 2 { row = [] }
            case "]", ",":
                if let n = number {
                    guard depth == 2, n <= 71 else {
                        return .failure(Problem(description: depth == 2 ? "code \(n) is not a Vestaboard code (0…71)" : "pattern rows must be lists of codes"))
                    }
                    row?.append(n)
                    number = nil
                }
                ended = false
                if ch == "]" {
                    if depth == 2, let r = row { rows.append(r); row = nil }
                    depth -= 1
                    guard depth >= 0 else { return .failure(Problem(description: "unbalanced ']' at character \(offset + 1)")) }
                }
            // By ASCII value: a Character range "0"..."9" also holds clusters such as "5\u{301}".
            case _ where ch.asciiValue.map { (48...57).contains($0) } == true:
                guard !ended else { return .failure(Problem(description: "missing ',' between codes at character \(offset + 1)")) }
                let d = Int(ch.asciiValue! - 48)
                let n = (number ?? 0) * 10 + d
                guard n < 1000 else { return .failure(Problem(description: "code too large at character \(offset + 1)")) }
                number = n
            case " ", "\n", "\t", "\r":
                ended = number != nil
            default:
                return .failure(Problem(description: "unexpected '\(ch)' at character \(offset + 1); a pattern is rows of codes like [[63,64],[65]]"))
            }
        }
        guard depth == 0, !rows.isEmpty else { return .failure(Problem(description: "a pattern is rows of codes like [[63,64],[65]]")) }
        return .success(rows)
    }
}
