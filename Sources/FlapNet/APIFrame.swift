import FlapCore
import FlapInput
import Foundation

/// A WebSocket frame from the message API, read from its JSON text.
public enum APIFrame: Equatable, Sendable {
    case authenticated
    case pong
    case new(APIMessage)
    case deleted(messageID: String)
    /// An event for senders or about friends, which a board does not act on.
    case ignored(type: String)
    case error(code: String, message: String)

    /// Why a frame could not be read: what was wrong, in words for the log.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// What one frame may hold (the client's frame size limits its bytes first).
    public static let limits = JSONLimits(maxBytes: 1 << 20, maxDepth: 8)

    public static func decode(_ text: String) -> Result<APIFrame, Problem> {
        let data = Data(text.utf8)
        do throws(JSONInputError) { try StrictJSON.check(Array(data), limits: limits) } catch {
            return .failure(Problem(description: "not a JSON object: \(preview(text)) (\(error))"))
        }
        guard let object = try? JSONSerialization.jsonObject(with: data), let fields = object as? [String: Any] else {
            return .failure(Problem(description: "not a JSON object: \(preview(text))"))
        }
        guard let type = fields["type"] as? String else {
            return .failure(Problem(description: "no \"type\" field: \(preview(text))"))
        }
        switch type {
        case "authenticated": return .success(.authenticated)
        case "pong": return .success(.pong)
        case "message.new":
            do {
                return .success(.new(try JSONDecoder().decode(NewMessage.self, from: data).message))
            } catch {
                return .failure(Problem(description: "message.new without a valid message: \(reason(error))"))
            }
        case "message.deleted":
            guard let id = fields["messageID"] as? String else {
                return .failure(Problem(description: "message.deleted without \"messageID\""))
            }
            return .success(.deleted(messageID: id))
        case "message.delivered", "message.displayed", "friend.request", "friend.accepted":
            return .success(.ignored(type: type))
        case "error":
            return .success(.error(code: "\(fields["code"] ?? "?")", message: "\(fields["message"] ?? "")"))
        default:
            return .failure(Problem(description: "unknown type '\(preview(type))'"))
        }
    }

    private struct NewMessage: Decodable { let message: APIMessage }

    /// What a decoding error says, without the noise.
    static func reason(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, let c): "missing \(path(c.codingPath + [key]))"
        case .typeMismatch(_, let c), .valueNotFound(_, let c): "\(path(c.codingPath)) has the wrong type"
        case .dataCorrupted(let c): "\(path(c.codingPath)) is not valid: \(c.debugDescription)"
        default: "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        "'" + keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".") + "'"
    }

    static func preview(_ text: String) -> String {
        text.count > 80 ? String(text.prefix(80)) + "… (\(text.utf8.count) bytes)" : text
    }
}

/// Frames the board sends.
enum OutgoingFrame {
    static func authenticate(token: String) -> String { json(["type": "authenticate", "token": token]) }
    static let ping = #"{"type":"ping"}"#
    static func displayed(_ id: String) -> String { json(["type": "message.displayed", "messageID": id]) }

    private static func json(_ fields: [String: String]) -> String { SortedJSON.string(fields) }
}
