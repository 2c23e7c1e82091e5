import FlapCore
import FlapDoor
import FlapHubInput
import FlapInput
import FlapMessages
import Foundation
import Logging
import NIOCore

/// The open WebSocket connections of each user, so events reach every device a user has.
actor SocketRegistry {
    /// A connection: what writes its frames (and its channel, to drop it when it stops reading).
    struct Socket {
        let writer: SocketWriter
        var channel: any Channel { writer.channel }
    }
    private var sockets: [String: [UUID: Socket]] = [:]
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    func add(_ user: String, _ id: UUID, _ socket: Socket) { sockets[user, default: [:]][id] = socket }
    func remove(_ user: String, _ id: UUID) { sockets[user]?[id] = nil }

    /// Sends one event to every connection of a user; returns how many took it. A connection
    /// whose unsent frames passed the channel's high watermark (64 KiB) has stopped reading:
    /// it is closed at once, not written to — a write would wait until it reads, and with it the
    /// request or socket that publishes (its device reconnects and catches up from its inbox).
    @discardableResult
    func send(_ text: String, to user: String) async -> Int {
        var sent = 0
        for (id, socket) in sockets[user] ?? [:] {
            guard socket.channel.isWritable else {
                sockets[user]?[id] = nil
                logger.warning("socket dropped: it stopped reading", metadata: ["user id": "\(user)"])
                socket.channel.close(promise: nil)
                continue
            }
            socket.writer.write(text)
            sent += 1
        }
        return sent
    }

    func count() -> Int { sockets.values.reduce(0) { $0 + $1.count } }
    func has(_ user: String) -> Bool { !(sockets[user]?.isEmpty ?? true) }

    /// Closes every connection ("service restart": the client reconnects); returns how many.
    func closeAll() async -> Int {
        let all = sockets.values.flatMap(\.values)
        sockets = [:]
        for socket in all { socket.writer.close(.unexpectedServerError, reason: "reconnect and catch up") }
        return all.count
    }
}

/// Server → client events, as JSON text: `WireFrame`s, the definition a board reads with.
enum HubEvent {
    static func error(_ code: String, _ message: String) -> String { WireFrame.error(code: code, message: message).text }
}

extension Hub {
    /// What an authenticated connection's frame other than a ping asks for.
    func handle(_ frame: WireFrame, of user: HubStore.User, _ outbound: SocketWriter) async throws {
        switch frame {
        case .displayed(let messageID, _):
            let t = now()
            guard let m = try await store.message(messageID, now: t), m.recipientID == user.id else {
                outbound.write(HubEvent.error("not_found", "no message \(messageID) to you"))
                return
            }
            // Shown before the POST that sent it marked it delivered: the sender still hears "delivered", once.
            try await delivered(try await store.markDelivered([m.id], now: t))
            // A board reports until it hears a pong after the report: the sender is told once.
            guard try await store.markDisplayed(m.id, by: user.id, now: t) != nil else { return }
            try await publish(.frame(user: m.senderID, text: WireFrame.displayed(messageID: m.id, recipientID: user.id).text))
        case .face(let face):
            if let problem = face.problem {
                outbound.write(HubEvent.error("bad_frame", "board.face: \(problem)"))
            } else {
                try await store.setFace(face, of: user.id, now: now())
            }
        case .shows(let layout):
            if let problem = WireFrame.layoutProblem(layout) {
                outbound.write(HubEvent.error("bad_frame", "board.shows: \(problem)"))
            } else {
                try await store.setLayout(layout, of: user.id, now: now())
            }
        default:
            outbound.write(HubEvent.error("bad_frame", "a client does not send '\(frame.type)'"))
        }
    }
}
