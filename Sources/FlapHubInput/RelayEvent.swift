import FlapInput
import Foundation

/// What one instance tells every instance: a frame for a user's connections, or a new message
/// for its recipient's (each instance sends it to the connections it holds, and the first to
/// deliver it marks it delivered), with its `message.new` frame when that is small enough: a
/// notification holds at most 8000 bytes.
public enum RelayEvent: Sendable, Equatable, Codable {
    case frame(user: String, text: String)
    case message(id: String, recipient: String, frame: String?)

    /// The largest event a notification carries: PostgreSQL's 8000 bytes, less the origin before it.
    public static let maxEvent = 7900

    /// What an earlier instance's JSON notice may hold: one notification, two levels deep.
    static let earlierJSON = JSONLimits(maxBytes: 8000, maxDepth: 4, maxValues: 16)

    /// What a notification of the event carries: `F` and the user, or `M` and the message's id
    /// and recipient, each as its length in bytes, `:` and itself; then the frame's text as it is
    /// — a new message's `m`, without its frame, when the whole would not fit (each instance then
    /// reads the message). Nothing in it is escaped or parsed as JSON: the frame, the bulk of it,
    /// is copied as it is both ways (JSON was 5 % of flaphub's processor time a message on two
    /// instances, issue 37). This instance's own connections are passed the event as it is, the
    /// frame always with it; and a relay-less instance (SQLite) writes no notice at all.
    public var notice: String {
        func field(_ s: String) -> String { "\(s.utf8.count):" + s }
        switch self {
        case .frame(let user, let text):
            return "F" + field(user) + text
        case .message(let id, let recipient, let frame):
            let head = field(id) + field(recipient)
            guard let frame, head.utf8.count + frame.utf8.count < Self.maxEvent else { return "m" + head }
            return "M" + head + frame
        }
    }

    /// The event a notice says (`notice`, or the JSON of its `Codable` definition that instances
    /// before it sent); nil when it is neither.
    public static func read(_ notice: Substring) -> RelayEvent? {
        var rest = notice.utf8[...]
        guard let kind = rest.popFirst() else { return nil }
        func field() -> String? {
            // A length: one to five digits, no sign, no more than what follows.
            guard let colon = rest.firstIndex(of: UInt8(ascii: ":")), (1...5).contains(rest.distance(from: rest.startIndex, to: colon)),
                  rest[..<colon].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let count = Int(String(decoding: rest[..<colon], as: UTF8.self)), count < rest.distance(from: colon, to: rest.endIndex) else { return nil }
            let start = rest.index(after: colon), end = rest.index(start, offsetBy: count)
            defer { rest = rest[end...] }
            return String(decoding: rest[start..<end], as: UTF8.self)
        }
        switch kind {
        case UInt8(ascii: "F"):
            return field().map { .frame(user: $0, text: String(decoding: rest, as: UTF8.self)) }
        case UInt8(ascii: "M"), UInt8(ascii: "m"):
            guard let id = field(), let recipient = field() else { return nil }
            guard kind == UInt8(ascii: "M") else { return rest.isEmpty ? .message(id: id, recipient: recipient, frame: nil) : nil }
            return .message(id: id, recipient: recipient, frame: String(decoding: rest, as: UTF8.self))
        case UInt8(ascii: "{"):
            // Checked first: Foundation's decoder traps (a deadly signal, not an error) on some
            // input nested some 500 deep — found by the hub-notice fuzzer, 2026-12-05.
            let bytes = Array(notice.utf8)
            do throws(JSONInputError) { try StrictJSON.check(bytes, limits: Self.earlierJSON) } catch { return nil }
            return try? JSONDecoder().decode(RelayEvent.self, from: Data(bytes))
        default:
            return nil
        }
    }
}
