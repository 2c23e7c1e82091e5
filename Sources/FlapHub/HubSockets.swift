import FlapCore
import FlapDoor
import FlapHubInput
import FlapInput
import FlapMessages
import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore

/// The open WebSocket connections of each user, so events reach every device a user has.
actor SocketRegistry {
    /// A connection: what writes its frames, and its channel (to drop it when it stops reading).
    struct Socket {
        let writer: WebSocketOutboundWriter
        let channel: any Channel
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
            if (try? await socket.writer.write(.text(text))) != nil { sent += 1 }
        }
        return sent
    }

    func count() -> Int { sockets.values.reduce(0) { $0 + $1.count } }
    func has(_ user: String) -> Bool { !(sockets[user]?.isEmpty ?? true) }

    /// Closes every connection ("service restart": the client reconnects); returns how many.
    func closeAll() async -> Int {
        let all = sockets.values.flatMap(\.values)
        sockets = [:]
        for socket in all { try? await socket.writer.close(.unexpectedServerError, reason: "reconnect and catch up") }
        return all.count
    }
}

/// Server → client events, as JSON text: `WireFrame`s, the definition a board reads with.
enum HubEvent {
    static func error(_ code: String, _ message: String) -> String { WireFrame.error(code: code, message: message).text }
}

extension Hub {
    /// One WebSocket connection: authenticate first (within 10 s), then ping/pong and
    /// `message.displayed`; a frame it cannot read gets an `error` event, never a crash.
    func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, channel: any Channel, logger: Logger) async throws {
        var frames = inbound.makeAsyncIterator()
        // The deadline and the frame are one decision: a frame read as the deadline closes the
        // connection is dropped, never served on a connection ending under it.
        let read = try await withDeadline(after: .seconds(10), late: { try? await outbound.close(.policyViolation, reason: "authenticate first") }) {
            try await frames.nextMessage(maxSize: maxFrame)
        }
        guard let first = read else { return }
        let (store, now) = (store, now)
        guard case .text(let text) = first, case .authenticate(let token)? = HubInput.frame(text),
              let user = try await apart({ try await store.user(token: token, now: now()) }) else {
            try await outbound.write(.text(HubEvent.error("unauthorized", "send {\"type\":\"authenticate\",\"token\":…} first, with a valid token")))
            return
        }
        let id = UUID()
        await sockets.add(user.id, id, .init(writer: outbound, channel: channel))
        do {
            try await serveAuthenticated(user, &frames, outbound, channel: channel, logger: logger)
        } catch {
            await sockets.remove(user.id, id)
            throw error
        }
        await sockets.remove(user.id, id)
    }

    /// An authenticated connection's frames, until it closes.
    private func serveAuthenticated(_ user: HubStore.User, _ frames: inout WebSocketInboundStream.AsyncIterator,
                                    _ outbound: WebSocketOutboundWriter, channel: any Channel, logger: Logger) async throws {
        try await outbound.write(.text(WireFrame.authenticated(user: .init(id: user.id, username: user.username)).text))
        logger.info("socket authenticated", metadata: ["user": "\(user.username)"])
        while let message = try await frames.nextMessage(maxSize: maxFrame) {
            // A client that sends but stops reading what it is answered is dropped (SocketRegistry.send).
            guard channel.isWritable else {
                logger.warning("socket dropped: it stopped reading", metadata: ["user": "\(user.username)"])
                channel.close(promise: nil)
                return
            }
            guard case .text(let text) = message else {
                try await outbound.write(.text(HubEvent.error("bad_frame", "expected JSON text, not a binary frame")))
                continue
            }
            let frame: WireFrame
            do {
                frame = try HubInput.checkedFrame(text)
            } catch {
                try await outbound.write(.text(HubEvent.error("bad_frame", HubInput.problem(error))))
                continue
            }
            if case .ping = frame {
                try await outbound.write(.text(WireFrame.pong.text))
            } else {
                try await apart { try await self.handle(frame, of: user, outbound) }
            }
        }
    }

    /// What an authenticated connection's frame other than a ping asks for.
    private func handle(_ frame: WireFrame, of user: HubStore.User, _ outbound: WebSocketOutboundWriter) async throws {
        switch frame {
        case .displayed(let messageID, _):
            let t = now()
            guard let m = try await store.message(messageID, now: t), m.recipientID == user.id else {
                try await outbound.write(.text(HubEvent.error("not_found", "no message \(messageID) to you")))
                return
            }
            // Shown before the POST that sent it marked it delivered: the sender still hears "delivered", once.
            try await delivered(try await store.markDelivered([m.id], now: t))
            _ = try await store.markDisplayed(m.id, by: user.id, now: t)
            try await publish(.frame(user: m.senderID, text: WireFrame.displayed(messageID: m.id, recipientID: user.id).text))
        case .face(let face):
            if let problem = face.problem {
                try await outbound.write(.text(HubEvent.error("bad_frame", "board.face: \(problem)")))
            } else {
                try await store.setFace(face, of: user.id, now: now())
            }
        case .shows(let layout):
            if let problem = WireFrame.layoutProblem(layout) {
                try await outbound.write(.text(HubEvent.error("bad_frame", "board.shows: \(problem)")))
            } else {
                try await store.setLayout(layout, of: user.id, now: now())
            }
        default:
            try await outbound.write(.text(HubEvent.error("bad_frame", "a client does not send '\(frame.type)'")))
        }
    }
}

/// Runs `work` in a child task, so that the stack it grows ends with it. A task keeps the deepest
/// its stack has been until it ends (Swift's task allocator frees its slabs only then), and a
/// connection's task lives as long as the board stays: database work (deep) run in it would be
/// held — ~30 KiB a board, measured — by every idle board waiting for its next frame.
func apart<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
    async let result = work()
    return try await result
}
