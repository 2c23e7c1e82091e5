import FlapCore
import FlapInput
import Foundation

/// The body of `POST /api/v1/messages`, read and checked: no I/O, so tests and the fuzzer
/// call it directly.
public struct SendRequest: Sendable {
    public var recipients: [String]
    public var content: String
    public var type: InboxMessage.ContentType
    /// When the message may first show; nil: at once.
    public var unlockAt: Double?

    /// A request body as a JSON object: strict JSON within `Hub.bodyLimits` first (400 naming
    /// the problem and where), then decoded.
    public static func object(_ bytes: [UInt8]) throws(HubError) -> [String: Any] {
        do throws(JSONInputError) { try StrictJSON.check(bytes, limits: Hub.bodyLimits) } catch {
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
            guard let n = u as? Double ?? (u as? Int).map(Double.init), n.isFinite else {
                throw HubError(400, "\"unlockAt\" must be seconds since 1970")
            }
            guard n < t + ttl else {
                throw HubError(400, "\"unlockAt\" is after the message expires (\(Int(ttl)) s after it is sent)")
            }
            unlockAt = n > t ? n : nil
        }
        return SendRequest(recipients: recipients, content: content, type: type, unlockAt: unlockAt)
    }
}
