import FlapCore
import FlapInput
import FlapMessages
import Foundation

/// The body of `POST /api/v1/messages`, read and checked: no I/O, so tests and the fuzzer
/// call it directly.
public struct SendRequest: Sendable {
    public var recipients: [String]
    public var content: String
    public var type: InboxMessage.ContentType
    /// When the message may first show; nil: at once.
    public var unlockAt: Double?
    /// How the board is to show it: `transition`, `arriveAt`, `duration`, `forced`.
    public var options = MessageOptions()

    /// A request body as a JSON object: strict JSON within `HubInput.bodyLimits` first (400 naming
    /// the problem and where), then decoded.
    public static func object(_ bytes: [UInt8]) throws(HubError) -> [String: Any] {
        do throws(JSONInputError) { try StrictJSON.check(bytes, limits: HubInput.bodyLimits) } catch {
            throw HubError(400, "body is not JSON: \(error)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw HubError(400, "body is not a JSON object")
        }
        return object
    }

    /// Reads the fields of a send; each wrong one is a 400 that names it.
    public static func read(_ body: [String: Any], now t: Double, ttl: Double) throws(HubError) -> SendRequest {
        guard let recipients = body["recipients"] as? [String], !recipients.isEmpty else {
            throw HubError(400, "\"recipients\" must be a non-empty list of user ids or usernames")
        }
        guard recipients.count <= MessageRules.maxRecipients else {
            throw HubError(400, "\(recipients.count) recipients; at most \(MessageRules.maxRecipients)")
        }
        guard let content = body["content"] as? String else { throw HubError(400, "\"content\" must be text") }
        if let t = body["contentType"], !(t is String) { throw HubError(400, "\"contentType\" must be text, pattern or vbml, as a string") }
        let typeName = body["contentType"] as? String ?? "text"
        guard let type = InboxMessage.ContentType(rawValue: typeName) else {
            throw HubError(400, "\"contentType\" '\(typeName)' is not text, pattern or vbml")
        }
        if let problem = MessageRules.problem(content: content, type: type) { throw HubError(400, problem) }
        var unlockAt: Double?
        if let u = body["unlockAt"], !(u is NSNull) {
            guard !isJSONBoolean(u), let n = u as? Double ?? (u as? Int).map(Double.init), n.isFinite else {
                throw HubError(400, "\"unlockAt\" must be seconds since 1970")
            }
            guard n < t + ttl else {
                throw HubError(400, "\"unlockAt\" is after the message expires (\(Int(ttl)) s after it is sent)")
            }
            unlockAt = n > t ? n : nil
        }
        return SendRequest(recipients: recipients, content: content, type: type, unlockAt: unlockAt, options: try MessageOptions.read(body))
    }
}

/// How a board is to show a message, beside its content (Flapboard extensions of the message
/// API, relayed to the board as given): its `transition` (the local API's fields: `strategy`,
/// `step_size`, …, or `transition` and `speed`), the instant it lands (`arriveAt`), how long it
/// shows (`duration`, 10 s – 12 h) and whether it goes through quiet hours (`forced`).
public struct MessageOptions: Codable, Equatable, Sendable {
    public var transition: TransitionFields?
    public var arriveAt: Double?
    public var duration: Double?
    public var forced: Bool?
    public init(transition: TransitionFields? = nil, arriveAt: Double? = nil, duration: Double? = nil, forced: Bool? = nil) {
        self.transition = transition; self.arriveAt = arriveAt; self.duration = duration; self.forced = forced
    }

    public var isEmpty: Bool { self == MessageOptions() }

    public func json() -> String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data("{}".utf8), as: UTF8.self) }

    /// Reads the options of a send body; a wrong one is a 400 that names it.
    static func read(_ body: [String: Any]) throws(HubError) -> MessageOptions {
        var o = MessageOptions()
        func number(_ key: String) throws(HubError) -> Double? {
            guard let v = body[key], !(v is NSNull) else { return nil }
            guard !isJSONBoolean(v), let n = v as? Double ?? (v as? Int).map(Double.init), n.isFinite else {
                throw HubError(400, "\"\(key)\" must be a number of seconds")
            }
            return n
        }
        if let t = body["transition"], !(t is NSNull) {
            guard let fields = t as? [String: Any], let data = try? JSONSerialization.data(withJSONObject: fields),
                  let read = try? JSONDecoder().decode(TransitionFields.self, from: data) else {
                throw HubError(400, "\"transition\" must be an object of transition fields (strategy, step_size, step_interval_ms, transition, speed, arrival, max_moving)")
            }
            do throws(TransitionFields.Invalid) { _ = try read.style() } catch { throw HubError(400, "transition: \(error.description)") }
            o.transition = read
        }
        o.arriveAt = try number("arriveAt")
        if let a = o.arriveAt, !(0...4_102_444_800).contains(a) { throw HubError(400, "\"arriveAt\" must be an instant between 1970 and 2100") }
        o.duration = try number("duration")
        if let d = o.duration, !InboxMessage.durationRange.contains(d) { throw HubError(400, "\"duration\" must be 10…43200 seconds") }
        if let f = body["forced"], !(f is NSNull) {
            guard isJSONBoolean(f), let b = f as? Bool else { throw HubError(400, "\"forced\" must be true or false") }
            o.forced = b
        }
        return o
    }
}

/// Whether a value JSONSerialization read is `true` or `false` — not a number: on Linux an
/// `NSNumber` 0 or 1 is also a `Bool` to `is` and `as?`, and `true` an `Int` and a `Double`;
/// only the boolean's own type (objCType `c`) tells them apart.
func isJSONBoolean(_ value: Any) -> Bool {
    guard let n = value as? NSNumber else { return false }
    return String(cString: n.objCType) == "c"
}
