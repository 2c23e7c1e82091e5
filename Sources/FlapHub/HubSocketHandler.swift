import FlapCore
import FlapDoor
import FlapHubInput
import FlapMessages
import Foundation
import Logging
import NIOCore
import NIOWebSocket

/// A board's WebSocket once upgraded, read by callback on its event loop: authenticate first
/// (within 10 s), then pings answered at once and every other frame handed — one at a time, in
/// order — to a task that ends with it (`Hub.handle`); no more is read while one is in hand. A
/// frame it cannot read gets an `error` event, never a crash; a close is answered and closes, and
/// so is the end of what the client sends without one.
final class HubSocketHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private enum State {
        case waiting(Scheduled<Void>?)
        case authenticating
        case authenticated(HubStore.User, UUID)
        case closed
    }
    private var state = State.waiting(nil)
    private var queue: [WebSocketFrame] = []
    private var inHand = false
    private var readHeld = false
    /// The connection's front door, which answers the board's pings itself (`pingReflex`)
    /// while this handler has no frame in hand or waiting: once authenticated.
    private var door: FrontDoor?
    private let hub: Hub
    private let logger: Logger

    init(hub: Hub, logger: Logger) {
        self.hub = hub
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        state = .waiting(context.eventLoop.scheduleTask(in: .seconds(10)) {
            let (handler, context) = bound.value
            guard case .waiting = handler.state else { return }
            handler.logger.info("socket closed: no authenticate frame within 10 s")
            handler.close(context, .policyViolation, "authenticate first")
        })
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .waiting(let deadline) = state { deadline?.cancel() }
        if case .authenticated(let user, let id) = state { let sockets = hub.sockets; Task { await sockets.remove(user.id, id) } }
        state = .closed
        queue = []
        door = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .text, .binary, .connectionClose:  // a close after the frames before it
            queue.append(frame)
            next(context)
        default:
            break  // a pong; continuations are the aggregator's
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOWebSocketFrameAggregator.Error {
            close(context, .messageTooLarge, "a message larger than \(hub.maxFrame) bytes")
        } else {
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            close(context, .goingAway, "the server is stopping: reconnect and catch up")
        } else if case .inputClosed? = event as? ChannelEvent {
            // The client shut its half without a close frame (its process ended, say): as a
            // close after the frames before it. Kept open, the connection would count against
            // its address's connections until the hub stopped.
            queue.append(WebSocketFrame(fin: true, opcode: .connectionClose, data: context.channel.allocator.buffer(capacity: 0)))
            next(context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Reads are held while a frame is in hand.
    func read(context: ChannelHandlerContext) {
        if inHand || !queue.isEmpty { readHeld = true } else { context.read() }
    }

    /// Takes up the next frame, unless one is in hand.
    private func next(_ context: ChannelHandlerContext) {
        while !inHand, !queue.isEmpty {
            let frame = queue.removeFirst()
            if frame.opcode == .connectionClose {
                var data = frame.unmaskedData
                queue = []
                return close(context, data.readWebSocketErrorCode() ?? .normalClosure, "")
            }
            switch state {
            case .waiting(let deadline):
                deadline?.cancel()
                authenticate(frame, context)
            case .authenticated(let user, _):
                serve(frame, of: user, context)
            case .authenticating, .closed:
                return
            }
        }
        if case .authenticated = state { door?.reflexOpen = !inHand && queue.isEmpty }
        if !inHand, queue.isEmpty, readHeld {
            readHeld = false
            context.read()
        }
    }

    /// Runs `work` in a task and, when it ends, `then` with its result on the loop (or closes,
    /// 1011, when it threw: the store failed). Nothing more is taken up meanwhile.
    private func handOff<T: Sendable>(_ context: ChannelHandlerContext, _ work: @escaping @Sendable () async throws -> T,
                                      then: @escaping (HubSocketHandler, ChannelHandlerContext, T) -> Void) {
        inHand = true
        door?.reflexOpen = false
        let bound = NIOLoopBound((self, context, then), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            loop.execute {
                let (handler, context, then) = bound.value
                handler.inHand = false
                switch result {
                case .success(let value):
                    then(handler, context, value)
                case .failure(let error):
                    handler.logger.error("socket closed: \(error)")
                    handler.close(context, .unexpectedServerError, "the server failed: reconnect")
                }
            }
        }
    }

    private func authenticate(_ frame: WebSocketFrame, _ context: ChannelHandlerContext) {
        let writer = SocketWriter(channel: context.channel)
        guard frame.opcode == .text, case .authenticate(let token)? = HubInput.frame(String(buffer: frame.unmaskedData)) else {
            return refuse(context, writer)
        }
        state = .authenticating
        let (hub, id) = (hub, UUID())
        handOff(context, {
            let user = try await hub.store.user(token: token, now: hub.now())
            if let user { await hub.sockets.add(user.id, id, .init(writer: writer)) }
            return user
        }, then: { handler, context, user in
            guard let user else { return handler.refuse(context, writer) }
            guard case .authenticating = handler.state else {  // closed meanwhile
                Task { await hub.sockets.remove(user.id, id) }
                return
            }
            handler.state = .authenticated(user, id)
            handler.door = try? context.pipeline.syncOperations.handler(type: FrontDoor.self)
            handler.door?.reflex = Self.pingReflex
            writer.write(WireFrame.authenticated(user: .init(id: user.id, username: user.username), pingSeconds: hub.limits.pingSeconds).text)
            handler.logger.info("socket authenticated", metadata: ["user": "\(user.username)"])
            handler.next(context)
        })
    }

    private func refuse(_ context: ChannelHandlerContext, _ writer: SocketWriter) {
        writer.write(HubEvent.error("unauthorized", "send {\"type\":\"authenticate\",\"token\":…} first, with a valid token"))
        close(context, .normalClosure, "")
    }

    private static let pong = WireFrame.pong.text
    /// flapd's ping, byte for byte, answered at the front door when it comes alone in a read: no
    /// frame decoded, no buffer allocated (the README's idle figures). A ping that comes otherwise
    /// — beside another frame, while one is in hand, spelled otherwise — is parsed and answered here.
    private static let pingReflex = WebSocketReflex(text: WireFrame.ping.text, answer: pong)

    /// An authenticated connection's frame.
    private func serve(_ frame: WebSocketFrame, of user: HubStore.User, _ context: ChannelHandlerContext) {
        let writer = SocketWriter(channel: context.channel)
        // A client that sends but stops reading what it is answered is dropped (SocketRegistry.send).
        guard context.channel.isWritable else {
            logger.warning("socket dropped: it stopped reading", metadata: ["user": "\(user.username)"])
            queue = []
            context.close(promise: nil)
            return
        }
        guard frame.opcode == .text else {
            return writer.write(HubEvent.error("bad_frame", "expected JSON text, not a binary frame"))
        }
        let parsed: WireFrame
        do {
            parsed = try HubInput.checkedFrame(String(buffer: frame.unmaskedData))
        } catch {
            return writer.write(HubEvent.error("bad_frame", HubInput.problem(error)))
        }
        if case .ping = parsed { return writer.write(Self.pong) }
        let hub = hub
        handOff(context, { try await hub.handle(parsed, of: user, writer) }, then: { handler, context, _ in handler.next(context) })
    }

    /// Sends a close frame with `code`, then closes.
    private func close(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode, _ reason: String) {
        door?.reflexOpen = false
        guard context.channel.isActive else { return }
        context.writeAndFlush(wrapOutboundOut(SocketWriter.closeFrame(code, reason, context.channel.allocator))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

/// What writes a board's frames: its channel (any thread), each frame flushed, never awaited —
/// a board that stops reading is dropped by its writability (`SocketRegistry.send`), not waited for.
struct SocketWriter: Sendable {
    let channel: any Channel

    func write(_ text: String) {
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text)), promise: nil)
    }

    /// A close frame with `code` and `reason`, then the connection closed.
    func close(_ code: WebSocketErrorCode, reason: String) {
        let channel = channel
        channel.writeAndFlush(Self.closeFrame(code, reason, channel.allocator)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// A close frame: `code`, then `reason`.
    static func closeFrame(_ code: WebSocketErrorCode, _ reason: String, _ allocator: ByteBufferAllocator) -> WebSocketFrame {
        var data = allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}
