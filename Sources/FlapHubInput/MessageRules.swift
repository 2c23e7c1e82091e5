import FlapCore
import FlapMessages
import Foundation

/// What the message API accepts as a message (the seed's limits): text of at most 132
/// characters of the board's character set (`{NN}` codes count as one; line breaks are free),
/// or a pattern of rows of codes 0…71 no larger than the board, or a VBML document of at most
/// 8 KiB that renders (each board renders it on its own size); at most 10 recipients; 50 sends
/// an hour; an unlock instant, if any, before the message expires.
public enum MessageRules {
    public static let maxCharacters = 132
    public static let maxRecipients = 10
    public static let sendsPerHour = 50
    public static let patternRows = 6, patternCols = 22
    public static let maxVBMLBytes = 8192

    /// Why the content is refused, or nil when it is good.
    public static func problem(content: String, type: InboxMessage.ContentType) -> String? {
        switch type {
        case .vbml:
            guard content.utf8.count <= maxVBMLBytes else { return "vbml: the document is larger than \(maxVBMLBytes) bytes" }
            do throws(VBMLDocument.Problem) {
                _ = try VBML.render(try VBMLDocument.decode(Data(content.utf8)), rows: patternRows, cols: patternCols)
                return nil
            } catch {
                return "vbml: \(error.description)"
            }
        case .pattern:
            switch PatternCodes.parse(content) {
            case .failure(let p): return "pattern: \(p.description)"
            case .success(let rows):
                if rows.count > patternRows || rows.contains(where: { $0.count > patternCols }) {
                    return "pattern is larger than \(patternRows) rows × \(patternCols) columns"
                }
                return nil
            }
        case .text:
            let tokens = GlyphToken.parse(content)
            var count = 0
            for (i, t) in tokens.enumerated() {
                switch t {
                case .character("\n"): continue
                case .character(let c):
                    let known = Glyph(character: c) ?? c.uppercased().first.flatMap { Glyph(character: $0) }
                    if known == nil { return "character '\(c)' at position \(i + 1) is not on the board's character set" }
                case .code(let n):
                    if Glyph(code: n) == nil { return "{\(n)} at position \(i + 1) is not a Vestaboard code" }
                }
                count += 1
            }
            if tokens.allSatisfy({ $0 == .character(" ") || $0 == .character("\n") || $0 == .code(0) }) {
                return "content is empty"
            }
            if count > maxCharacters { return "content has \(count) characters; at most \(maxCharacters)" }
            return nil
        }
    }
}
