import FlapCore
import FlapInput
import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore

/// The open WebSocket connections of each user, so events reach every device a user has.
actor SocketRegistry {
    private var sockets: [String: [UUID: WebSocketOutboundWriter]] = [:]

    func add(_ user: String, _ id: UUID, _ writer: WebSocketOutboundWriter) { sockets[user, default: [:]][id] = writer }
    func remove(_ user: String, _ id: UUID) { sockets[user]?[id] = nil }

    /// Sends one event to every connection of a user; returns how many took it.
    @discardableResult
    func send(_ text: String, to user: String) async -> Int {
        var sent = 0
        for writer in (sockets[user] ?? [:]).values {
            if (try? await writer.write(.text(text))) != nil { sent += 1 }
        }
        return sent
    }

    func count() -> Int { sockets.values.reduce(0) { $0 + $1.count } }
}

/// Server → client events, as JSON text.
enum HubEvent {
    static func json(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func error(_ code: String, _ message: String) -> String { json(["type": "error", "code": code, "message": message]) }

    /// `message.new` with the seed's flat fields and the whole message under `message`.
    static func new(_ m: APIMessage) -> String {
        let message = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(m))) ?? [:]
        var fields: [String: Any] = ["type": "message.new", "messageID": m.id, "senderID": m.senderID,
                                     "content": m.content, "timestamp": m.timestamp, "message": message]
        if let u = m.unlockAt { fields["unlockAt"] = u }
        return json(fields)
    }
}

extension Hub {
    /// One WebSocket connection: authenticate first (within 10 s), then ping/pong and
    /// `message.displayed`; a frame it cannot read gets an `error` event, never a crash.
    func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, logger: Logger) async throws {
        var frames = inbound.makeAsyncIterator()
        let deadline = Task {
            guard (try? await Task.sleep(for: .seconds(10))) != nil else { return }
            try? await outbound.close(.policyViolation, reason: "authenticate first")
        }
        let first = try await frames.nextMessage(maxSize: maxFrame)
        deadline.cancel()
        guard case .text(let text) = first, let fields = Self.object(text), fields["type"] as? String == "authenticate",
              let token = fields["token"] as? String, let user = try store.user(token: token) else {
            try await outbound.write(.text(HubEvent.error("unauthorized", "send {\"type\":\"authenticate\",\"token\":…} first, with a valid token")))
            return
        }
        let id = UUID()
        await sockets.add(user.id, id, outbound)
        defer { Task { await sockets.remove(user.id, id) } }
        try await outbound.write(.text(HubEvent.json(["type": "authenticated", "user": ["id": user.id, "username": user.username]])))
        logger.info("socket authenticated", metadata: ["user": "\(user.username)"])
        while let message = try await frames.nextMessage(maxSize: maxFrame) {
            guard case .text(let text) = message, let fields = Self.object(text), let type = fields["type"] as? String else {
                try await outbound.write(.text(HubEvent.error("bad_frame", "expected a JSON object with a \"type\"")))
                continue
            }
            switch type {
            case "ping":
                try await outbound.write(.text(HubEvent.json(["type": "pong"])))
            case "message.displayed":
                guard let messageID = fields["messageID"] as? String else {
                    try await outbound.write(.text(HubEvent.error("bad_frame", "message.displayed needs \"messageID\"")))
                    continue
                }
                let t = now()
                guard let m = try store.message(messageID, now: t), m.recipientID == user.id else {
                    try await outbound.write(.text(HubEvent.error("not_found", "no message \(messageID) to you")))
                    continue
                }
                // Shown before the POST that sent it marked it delivered: the sender still hears "delivered", once.
                try await delivered(try store.markDelivered([m.id], now: t))
                _ = try store.markDisplayed(m.id, by: user.id, now: t)
                await sockets.send(HubEvent.json(["type": "message.displayed", "messageID": m.id, "recipientID": user.id]), to: m.senderID)
            default:
                try await outbound.write(.text(HubEvent.error("bad_frame", "unknown type '\(type.prefix(40))'")))
            }
        }
    }

    /// A frame's JSON object, or nil when its text is not strict JSON within `frameLimits`.
    public static func object(_ text: String) -> [String: Any]? {
        guard (try? StrictJSON.check(Array(text.utf8), limits: frameLimits)) != nil else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }
}
