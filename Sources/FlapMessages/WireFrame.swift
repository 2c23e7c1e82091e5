import FlapCore
import Foundation

/// A WebSocket frame of the message API, either way, as one Codable definition: flaphub writes
/// what a board (`flapd`) reads and reads what a board writes. On the wire each frame is one
/// JSON object whose `"type"` names it; `messageID` and the other keys are spelt as the seed's
/// API spells them.
public enum WireFrame: Codable, Equatable, Sendable {
    // What a client sends.
    /// The first frame of a connection.
    case authenticate(token: String)
    case ping
    /// From a board: the message is on the wall. From the hub to its sender, with who shows it.
    case displayed(messageID: String, recipientID: String? = nil)
    /// From a board, after `authenticated`: how it shows senders (for a sender's preview).
    case face(BoardFace)
    /// From a board, whenever it settles (and at each connect): the codes it shows, row by row —
    /// what the Cloud API's readers get back (the board's, not the last message's).
    case shows(layout: [[Int]])

    // What the hub sends.
    /// `pingSeconds`: how often the server asks a board to ping at the least (absent: its own).
    case authenticated(user: User, pingSeconds: Int? = nil)
    case pong
    /// A new message, with the seed's flat fields beside the whole message (which is what is read).
    case new(APIMessage)
    case deleted(messageID: String)
    /// To a sender: the message reached a device of its recipient.
    case delivered(messageID: String, recipientID: String)
    case friendRequest(requestID: String, fromUser: User)
    case friendAccepted(friendID: String)
    case error(code: String, message: String)

    /// A user as frames name one.
    public struct User: Codable, Equatable, Sendable {
        public var id: String
        public var username: String
        public init(id: String, username: String) { self.id = id; self.username = username }
    }

    /// The `"type"` of each frame.
    public var type: String {
        switch self {
        case .authenticate: "authenticate"
        case .ping: "ping"
        case .displayed: "message.displayed"
        case .face: "board.face"
        case .shows: "board.shows"
        case .authenticated: "authenticated"
        case .pong: "pong"
        case .new: "message.new"
        case .deleted: "message.deleted"
        case .delivered: "message.delivered"
        case .friendRequest: "friend.request"
        case .friendAccepted: "friend.accepted"
        case .error: "error"
        }
    }

    /// A frame whose `"type"` no frame has.
    public struct UnknownType: Error, Equatable {
        public let type: String
        public init(type: String) { self.type = type }
    }

    /// A frame of a known type whose other fields do not read: the type, and why.
    public struct Invalid: Error {
        public let type: String
        public let cause: any Error
    }

    private enum Key: String, CodingKey {
        case type, token, messageID, recipientID, user, message, requestID, fromUser, friendID, code
        case senderID, content, timestamp, unlockAt, face, layout, pingSeconds
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let type = try c.decode(String.self, forKey: .type)
        do {
            switch type {
            case "authenticate": self = .authenticate(token: try c.decode(String.self, forKey: .token))
            case "ping": self = .ping
            case "message.displayed":
                self = .displayed(messageID: try c.decode(String.self, forKey: .messageID),
                                  recipientID: try c.decodeIfPresent(String.self, forKey: .recipientID))
            case "board.face": self = .face(try c.decode(BoardFace.self, forKey: .face))
            case "board.shows": self = .shows(layout: try c.decode([[Int]].self, forKey: .layout))
            case "authenticated":
                // A board needs no more than the type; the user is for people's apps.
                self = .authenticated(user: (try? c.decodeIfPresent(User.self, forKey: .user)) ?? User(id: "", username: ""),
                                      pingSeconds: (try? c.decodeIfPresent(Int.self, forKey: .pingSeconds)) ?? nil)
            case "pong": self = .pong
            case "message.new": self = .new(try c.decode(APIMessage.self, forKey: .message))
            case "message.deleted": self = .deleted(messageID: try c.decode(String.self, forKey: .messageID))
            case "message.delivered":
                self = .delivered(messageID: try c.decode(String.self, forKey: .messageID),
                                  recipientID: try c.decodeIfPresent(String.self, forKey: .recipientID) ?? "")
            case "friend.request":
                self = .friendRequest(requestID: try c.decode(String.self, forKey: .requestID),
                                      fromUser: try c.decode(User.self, forKey: .fromUser))
            case "friend.accepted": self = .friendAccepted(friendID: try c.decode(String.self, forKey: .friendID))
            case "error":
                self = .error(code: (try? c.decode(String.self, forKey: .code)) ?? "?",
                              message: (try? c.decode(String.self, forKey: .message)) ?? "")
            default: throw UnknownType(type: type)
            }
        } catch let error as UnknownType {
            throw error
        } catch {
            throw Invalid(type: type, cause: error)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(type, forKey: .type)
        switch self {
        case .authenticate(let token): try c.encode(token, forKey: .token)
        case .ping, .pong: break
        case .displayed(let id, let recipient):
            try c.encode(id, forKey: .messageID)
            try c.encodeIfPresent(recipient, forKey: .recipientID)
        case .face(let face): try c.encode(face, forKey: .face)
        case .shows(let layout): try c.encode(layout, forKey: .layout)
        case .authenticated(let user, let pingSeconds):
            try c.encode(user, forKey: .user)
            try c.encodeIfPresent(pingSeconds, forKey: .pingSeconds)
        case .new(let m):
            try c.encode(m.id, forKey: .messageID)
            try c.encode(m.senderID, forKey: .senderID)
            try c.encode(m.content, forKey: .content)
            try c.encode(m.timestamp, forKey: .timestamp)
            try c.encodeIfPresent(m.unlockAt, forKey: .unlockAt)
            try c.encode(m, forKey: .message)
        case .deleted(let id): try c.encode(id, forKey: .messageID)
        case .delivered(let id, let recipient):
            try c.encode(id, forKey: .messageID)
            try c.encode(recipient, forKey: .recipientID)
        case .friendRequest(let id, let from):
            try c.encode(id, forKey: .requestID)
            try c.encode(from, forKey: .fromUser)
        case .friendAccepted(let id): try c.encode(id, forKey: .friendID)
        case .error(let code, let message):
            try c.encode(code, forKey: .code)
            try c.encode(message, forKey: .message)
        }
    }

    /// What a `board.shows` layout may be: 1–48 rows of 1–200 codes 0…71, at most 4,096 in all
    /// (a grid of boards is one layout).
    public static func layoutProblem(_ layout: [[Int]]) -> String? {
        guard (1...48).contains(layout.count) else { return "layout has \(layout.count) rows; 1–48" }
        guard let width = layout.first?.count, (1...200).contains(width), layout.allSatisfy({ $0.count == width }) else {
            return "layout rows must all have the same 1–200 codes"
        }
        guard layout.count * width <= 4096 else { return "layout has \(layout.count * width) codes; at most 4096" }
        if let bad = layout.joined().first(where: { !(0...71).contains($0) }) { return "layout code \(bad) is not 0…71" }
        return nil
    }

    /// The frame's JSON text, keys sorted. The frames flaphub writes for every message are
    /// written directly (`JSONObjectText`: the same text), the others by their `Codable` definition.
    public var text: String {
        var o = JSONObjectText(escapingSlashes: false)
        switch self {
        case .new(let m):
            o.add("type", type); o.add("messageID", m.id); o.add("senderID", m.senderID); o.add("content", m.content)
            o.add("timestamp", m.timestamp); o.add("unlockAt", m.unlockAt); o.add("message", m.jsonObject(escapingSlashes: false))
            return o.text
        case .delivered(let id, let recipient):
            o.add("type", type); o.add("messageID", id); o.add("recipientID", recipient)
            return o.text
        case .deleted(let id):
            o.add("type", type); o.add("messageID", id)
            return o.text
        default: break
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every field is a string, a number or a message: encoding cannot fail.
        return String(decoding: (try? encoder.encode(self)) ?? Data(#"{"type":"error"}"#.utf8), as: UTF8.self)
    }

    /// Reads a frame's JSON text (the caller has checked it as strict JSON within its limits).
    public static func decode(_ text: String) throws -> WireFrame {
        try JSONDecoder().decode(WireFrame.self, from: Data(text.utf8))
    }
}
