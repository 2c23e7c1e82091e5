import FlapCore
import FlapInput
import FlapMessages
import Foundation

/// A WebSocket frame from the message API, read from its JSON text.
public enum APIFrame: Equatable, Sendable {
    /// `pingSeconds`: how often the server asks the board to ping at the least, if it says.
    case authenticated(pingSeconds: Int?)
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

    /// Reads a frame as `WireFrame` (the definition flaphub writes with) and keeps what a
    /// board acts on; every way it can be wrong is a `Problem` that says which.
    public static func decode(_ text: String) -> Result<APIFrame, Problem> {
        do throws(JSONInputError) { try StrictJSON.check(Array(text.utf8), limits: limits) } catch {
            return .failure(Problem(description: "not a JSON object: \(preview(text)) (\(error))"))
        }
        let frame: WireFrame
        do {
            frame = try WireFrame.decode(text)
        } catch let unknown as WireFrame.UnknownType {
            return .failure(Problem(description: "unknown type '\(preview(unknown.type))'"))
        } catch let invalid as WireFrame.Invalid {
            if case .keyNotFound(let key, let c) = invalid.cause as? DecodingError, c.codingPath.isEmpty {
                return .failure(Problem(description: "\(invalid.type) without \"\(key.stringValue)\""))
            }
            let field = (invalid.cause as? DecodingError).flatMap(\.context?.codingPath.first?.stringValue) ?? "frame"
            return .failure(Problem(description: "\(invalid.type) without a valid \(field): \(reason(invalid.cause))"))
        } catch DecodingError.keyNotFound(let key, let c) where c.codingPath.isEmpty && key.stringValue == "type" {
            return .failure(Problem(description: "no \"type\" field: \(preview(text))"))
        } catch {
            return .failure(Problem(description: "not a JSON object: \(preview(text))"))
        }
        switch frame {
        case .authenticated(_, let pingSeconds): return .success(.authenticated(pingSeconds: pingSeconds))
        case .pong: return .success(.pong)
        case .new(let m): return .success(.new(m))
        case .deleted(let id): return .success(.deleted(messageID: id))
        case .error(let code, let message): return .success(.error(code: code, message: message))
        case .displayed, .delivered, .friendRequest, .friendAccepted, .authenticate, .ping, .face, .shows: return .success(.ignored(type: frame.type))
        }
    }

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

extension DecodingError {
    var context: Context? {
        switch self {
        case .keyNotFound(_, let c), .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): c
        @unknown default: nil
        }
    }
}

/// Frames the board sends.
enum OutgoingFrame {
    static func authenticate(token: String) -> String { WireFrame.authenticate(token: token).text }
    static let ping = WireFrame.ping.text
    static func displayed(_ id: String) -> String { WireFrame.displayed(messageID: id).text }
    static func face(_ face: BoardFace) -> String { WireFrame.face(face).text }
    static func shows(_ layout: [[Int]]) -> String { WireFrame.shows(layout: layout).text }
}
