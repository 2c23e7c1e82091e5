import FlapInput
import Foundation

/// A message posted to the local API: rows of codes (a bare array, or `{"characters": …}` as
/// the Vestaboard Local API takes it) or `{"text": …}` to be laid out.
public enum LocalMessage: Equatable, Sendable {
    case codes([[Int]])
    case text(String)

    private struct Object: Decodable {
        var characters: [[Int]]?
        var text: String?
    }

    /// What a body may hold: the local API's body limit, and nesting no message needs.
    public static let limits = JSONLimits(maxBytes: LocalAPI.maxBody, maxDepth: 8)

    /// Reads a request body; the error says what is wrong and where. The bytes are checked as
    /// strict JSON within `limits` before a decoder sees them.
    public static func parse(_ body: Data) -> Result<LocalMessage, LocalAPIError> {
        do throws(JSONInputError) { try StrictJSON.check(Array(body), limits: limits) } catch {
            return .failure(.badRequest("body is not JSON: \(error)"))
        }
        let first = body.first { !Set<UInt8>([0x20, 0x09, 0x0A, 0x0D]).contains($0) }
        do {
            if first == UInt8(ascii: "[") { return .success(.codes(try JSONDecoder().decode([[Int]].self, from: body))) }
            let object = try JSONDecoder().decode(Object.self, from: body)
            if let rows = object.characters { return .success(.codes(rows)) }
            if let text = object.text { return .success(.text(text)) }
            return .failure(.badRequest("expected an array of rows of codes, {\"characters\": […]} or {\"text\": \"…\"}"))
        } catch let error as DecodingError {
            let root = first == UInt8(ascii: "[") ? "message" : ""
            if case .dataCorrupted(let c) = error, c.codingPath.isEmpty,
               let json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) {
                // Valid JSON that the decoder refused as a whole: find the value that is no code.
                let rows: Any? = root.isEmpty ? (json as? [String: Any])?["characters"] : json
                if let place = firstNonInteger(rows, path: root.isEmpty ? "characters" : root) {
                    return .failure(.badRequest("\(place) is not a whole-number code"))
                }
            }
            return .failure(.badRequest(describe(error, root: root)))
        } catch {
            return .failure(.badRequest("body is not JSON"))
        }
    }

    private static func firstNonInteger(_ value: Any?, path: String) -> String? {
        guard let rows = value as? [Any] else { return nil }
        for (r, row) in rows.enumerated() {
            guard let row = row as? [Any] else { return "\(path)[\(r)]" }
            for (c, v) in row.enumerated() {
                guard let n = v as? NSNumber, n.doubleValue.rounded() == n.doubleValue else { return "\(path)[\(r)][\(c)]" }
            }
        }
        return nil
    }

    private static func describe(_ error: DecodingError, root: String) -> String {
        func place(_ path: [any CodingKey]) -> String {
            path.reduce(root) { s, k in k.intValue.map { "\(s)[\($0)]" } ?? (s.isEmpty ? k.stringValue : "\(s).\(k.stringValue)") }
        }
        switch error {
        case .typeMismatch(let type, let c):
            let what = type == Int.self ? "a whole-number code" : type == String.self ? "a string" : "an array"
            return c.codingPath.isEmpty ? "expected an array of rows of codes, {\"characters\": […]} or {\"text\": \"…\"}"
                : "\(place(c.codingPath)) is not \(what)"
        case .dataCorrupted(let c):
            return c.codingPath.isEmpty ? "body is not JSON" : "\(place(c.codingPath)) is not a whole-number code"
        case .valueNotFound(_, let c): return "\(place(c.codingPath)) is null"
        case .keyNotFound(let k, _): return "missing \(k.stringValue)"
        @unknown default: return "body is not a message"
        }
    }
}

/// A refusal of the local API: an HTTP status and a message that names the problem.
public struct LocalAPIError: Error, Equatable, Sendable {
    public var status: Int
    public var message: String
    public static func badRequest(_ m: String) -> LocalAPIError { LocalAPIError(status: 400, message: m) }
}
