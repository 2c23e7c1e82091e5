import FlapCore
import FlapInput
import FlapMessages
import Foundation

/// A write of Vestaboard's Cloud API (`{"text": …}` or `{"characters": [[…]]}`, with `forced`)
/// or of its Read/Write API (the same, or the rows as a bare array), read and checked: no I/O,
/// so tests and the fuzzer call it directly. Its content is a message of the message API
/// (text, or a pattern of codes), under the same rules.
public struct VestaboardWrite: Sendable, Equatable {
    public var content: String
    public var type: InboxMessage.ContentType
    public var forced: Bool

    public init(content: String, type: InboxMessage.ContentType, forced: Bool) {
        self.content = content; self.type = type; self.forced = forced
    }

    /// Reads a request body; each wrong part is a 400 that names it.
    public static func read(_ bytes: [UInt8]) throws(HubError) -> VestaboardWrite {
        do throws(JSONInputError) { try StrictJSON.check(bytes, limits: HubInput.bodyLimits) } catch {
            throw HubError(400, "body is not JSON: \(error)")
        }
        let data = Data(bytes)
        if bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "[") {
            return try characters(try decode([[Int]].self, data, prefix: []), forced: false)
        }
        let body = try decode(Body.self, data, prefix: [])
        switch (body.text, body.characters) {
        case (let text?, nil):
            if let problem = MessageRules.problem(content: text, type: .text) { throw HubError(400, "text: \(problem)") }
            return VestaboardWrite(content: text, type: .text, forced: body.forced ?? false)
        case (nil, let rows?): return try characters(rows, forced: body.forced ?? false)
        case (nil, nil): throw HubError(400, "body needs \"text\" or \"characters\"")
        default: throw HubError(400, "give \"text\" or \"characters\", not both")
        }
    }

    private struct Body: Decodable {
        var text: String?
        var characters: [[Int]]?
        var forced: Bool?
    }

    /// Decodes `type`; a value of the wrong type is a 400 that says where.
    private static func decode<T: Decodable>(_ type: T.Type, _ data: Data, prefix: [String]) throws(HubError) -> T {
        do { return try JSONDecoder().decode(type, from: data) } catch let error as DecodingError {
            let path: [any CodingKey]
            switch error {
            case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): path = c.codingPath
            case .keyNotFound(_, let c): path = c.codingPath
            @unknown default: path = []
            }
            let keys = path.map(\.stringValue), indices = path.compactMap(\.intValue)
            switch (keys.first, indices.count) {
            case ("text"?, _): throw HubError(400, "\"text\" must be a string")
            case ("forced"?, _): throw HubError(400, "\"forced\" must be true or false")
            case (_, 2): throw HubError(400, "characters: row \(indices[0] + 1), column \(indices[1] + 1) is not a code 0…71")
            case (_, 1): throw HubError(400, "characters: row \(indices[0] + 1) is not a list of codes")
            case ("characters"?, _): throw HubError(400, "\"characters\" must be rows of codes")
            default: throw HubError(400, "body must be {\"text\": …}, {\"characters\": [[…]]} or the rows of codes")
            }
        } catch {
            throw HubError(400, "body is not JSON: \(error)")
        }
    }

    /// Rows of codes 0…71, at most the board's 6 × 22.
    static func characters(_ codes: [[Int]], forced: Bool) throws(HubError) -> VestaboardWrite {
        for (r, row) in codes.enumerated() {
            if let c = row.firstIndex(where: { !(0...71).contains($0) }) {
                throw HubError(400, "characters: row \(r + 1), column \(c + 1) is not a code 0…71")
            }
        }
        let content = "[" + codes.map { "[" + $0.map(String.init).joined(separator: ",") + "]" }.joined(separator: ",") + "]"
        if let problem = MessageRules.problem(content: content, type: .pattern) { throw HubError(400, "characters: \(problem)") }
        return VestaboardWrite(content: content, type: .pattern, forced: forced)
    }
}
