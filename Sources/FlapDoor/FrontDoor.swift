import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The limits every HTTP server of the project keeps at its front door, before any request is
/// parsed.
public struct DoorLimits: Sendable {
    /// Most connections open at once, in all and from one client address; over either the
    /// connection is answered 503 or 429 and closed without reading.
    public var maxConnections = 256
    public var maxConnectionsPerClient = 32
    /// The first request's head (request line and headers) must have arrived within this of
    /// the connection opening, else 408 and the connection closes.
    public var headTimeout: TimeAmount = .seconds(10)
    /// Every request must be read whole and answered within this of its first byte (a head or
    /// a body sent a byte at a time holds a connection no longer), else 408 and the connection
    /// closes. Not applied once a connection is a WebSocket.
    public var requestTimeout: TimeAmount = .seconds(10)
    public init() {}
}

/// Counts open connections, in all and per client address.
public final class ConnectionCensus: Sendable {
    let limits: DoorLimits
    private let open = NIOLockedValueBox((total: 0, perClient: [String: Int]()))
    public init(limits: DoorLimits) { self.limits = limits }

    /// Counts a connection in, or answers the status that refuses it (not counted).
    public func admit(_ client: String) -> Int? {
        open.withLockedValue { o in
            if o.total >= limits.maxConnections { return 503 }
            if o.perClient[client, default: 0] >= limits.maxConnectionsPerClient { return 429 }
            o.total += 1
            o.perClient[client, default: 0] += 1
            return nil
        }
    }

    public func leave(_ client: String) {
        open.withLockedValue { o in
            o.total -= 1
            o.perClient[client, default: 1] -= 1
            if o.perClient[client] == 0 { o.perClient[client] = nil }
        }
    }
}

/// The first handler of a server connection, on its raw bytes: it admits the connection
/// through the census (or refuses it), gives the first request head `headTimeout` to arrive,
/// writes the answers of `ParserRefusal` straight to the socket, and once the connection is a
/// WebSocket closes it (1002) at the first unmasked client frame and answers its owner's
/// `reflex` itself. Bytes pass through it unchanged.
public final class FrontDoor: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    let census: ConnectionCensus
    let limits: DoorLimits
    private var client = "?"
    private var admitted = false
    private var answered = false
    private var deadline: Scheduled<Void>?
    /// Fires when the request begun has not been answered within `requestTimeout`.
    private var requestDeadline: Scheduled<Void>?
    /// The last three bytes read, to find the blank line that ends the first head.
    private var tail: [UInt8] = []
    private var headSeen = false
    /// Set once the server switched the connection to WebSocket (it wrote a 101).
    private var maskCheck: MaskCheck?
    /// What came after the first head before the first answer: WebSocket frames, if that
    /// answer is a 101 (at most `maxBody`-like 64 KiB are kept; the rest goes unchecked there).
    private var afterFirstHead: [UInt8]? = nil
    /// Bytes read since the last answer was written: a request begun, when not zero.
    private var unanswered = 0
    /// A message of a WebSocket this door answers itself, and whether it may now: set on the
    /// connection's event loop by the handler that owns the WebSocket (`WebSocketReflex`).
    public var reflex: WebSocketReflex?
    public var reflexOpen = false

    public init(census: ConnectionCensus, limits: DoorLimits) {
        self.census = census; self.limits = limits
    }

    /// Sets up a server channel's pipeline: this door first, then `rest`, then a
    /// `ParserRefusal` last.
    public static func install(on channel: any Channel, census: ConnectionCensus, limits: DoorLimits,
                               rest: () throws -> Void) throws {
        try channel.pipeline.syncOperations.addHandler(FrontDoor(census: census, limits: limits), position: .first)
        try rest()
        try channel.pipeline.syncOperations.addHandler(ParserRefusal(), position: .last)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { opened(context: context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        opened(context: context)
        context.fireChannelActive()
    }

    private func opened(context: ChannelHandlerContext) {
        guard !admitted, !answered else { return }
        client = context.channel.remoteAddress?.ipAddress ?? "?"
        if let status = census.admit(client) {
            answer(status, status == 429 ? "too many connections from this address" : "too many connections", context: context)
            return
        }
        admitted = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let seconds = limits.headTimeout.nanoseconds / 1_000_000_000
        deadline = context.eventLoop.scheduleTask(in: limits.headTimeout) {
            let (door, context) = bound.value
            door.expire("no request head within \(seconds) s", context: context)
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        requestDeadline?.cancel()
        if admitted { census.leave(client); admitted = false }
        context.fireChannelInactive()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if maskCheck == nil, let early = afterFirstHead {
            afterFirstHead = nil
            if unwrapOutboundIn(data).readableBytesView.starts(with: Array("HTTP/1.1 101 ".utf8)) {
                maskCheck = MaskCheck()
                if !maskCheck!.read(early) {
                    context.write(data, promise: promise)
                    closeUnmasked(context: context)
                    return
                }
            }
        }
        unanswered = 0
        requestDeadline?.cancel()
        context.write(data, promise: promise)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if answered { return }
        if unanswered == 0, maskCheck == nil {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let seconds = limits.requestTimeout.nanoseconds / 1_000_000_000
            requestDeadline = context.eventLoop.scheduleTask(in: limits.requestTimeout) {
                let (door, context) = bound.value
                if door.unanswered > 0, door.maskCheck == nil {
                    door.answer(408, "the request was not read and answered within \(seconds) s", context: context)
                }
            }
        }
        unanswered += unwrapInboundIn(data).readableBytes
        if maskCheck != nil {
            let betweenMessages = maskCheck!.betweenMessages
            guard maskCheck!.read(unwrapInboundIn(data).readableBytesView) else {
                closeUnmasked(context: context)
                return
            }
            if reflexOpen, betweenMessages, let reflex, context.channel.isWritable, reflex.matches(unwrapInboundIn(data)) {
                context.writeAndFlush(wrapOutboundOut(reflex.answer), promise: nil)
                return
            }
        }
        if headSeen, afterFirstHead != nil, afterFirstHead!.count < 64 * 1024 {
            afterFirstHead! += unwrapInboundIn(data).readableBytesView
        }
        if !headSeen {
            let bytes = unwrapInboundIn(data)
            tail.append(contentsOf: bytes.readableBytesView)
            if let end = tail.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]) {
                headSeen = true
                deadline?.cancel()
                afterFirstHead = Array(tail[end.upperBound...])
                tail = []
            } else {
                tail = Array(tail.suffix(3))
            }
        }
        context.fireChannelRead(data)
    }

    /// Closes a WebSocket with 1002 (protocol error), as RFC 6455 §5.1 asks of a server that
    /// reads an unmasked client frame.
    private func closeUnmasked(context: ChannelHandlerContext) {
        answered = true
        let reason = Array("unmasked client frame".utf8)
        let close: [UInt8] = [0x88, UInt8(2 + reason.count), 0x03, 0xEA] + reason
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: close))).whenComplete { _ in
            bound.value.close(promise: nil)
        }
    }

    /// Answers through the front door of `context`'s pipeline, past every HTTP handler (which
    /// may hold no request to answer); false when the pipeline has no front door.
    @discardableResult
    public static func answer(_ status: Int, _ message: String, pipelineOf context: ChannelHandlerContext) -> Bool {
        guard let (door, doorContext) = door(of: context.pipeline) else { return false }
        door.answer(status, message, context: doorContext)
        return true
    }

    /// The front door of a pipeline and its context, if it has one; on the pipeline's event loop.
    private static func door(of pipeline: ChannelPipeline) -> (FrontDoor, ChannelHandlerContext)? {
        guard let door = try? pipeline.syncOperations.handler(type: FrontDoor.self),
              let doorContext = try? pipeline.syncOperations.context(handlerType: FrontDoor.self) else { return nil }
        return (door, doorContext)
    }

    /// Ends a connection that ran out of time: 408 when a request had begun, else (an idle
    /// keep-alive connection) a plain close, which clients take as the end of a pooled
    /// connection rather than as the answer to their next request. On the channel's event loop.
    public static func timeOut(_ message: String, channel: any Channel) {
        channel.eventLoop.preconditionInEventLoop()
        guard let (door, doorContext) = door(of: channel.pipeline) else { channel.close(promise: nil); return }
        door.expire(message, context: doorContext)
    }

    /// 408 when a request had begun, else a plain close (see `timeOut`).
    private func expire(_ message: String, context: ChannelHandlerContext) {
        if unanswered > 0 { answer(408, message, context: context) } else { answered = true; context.close(promise: nil) }
    }

    /// Writes a complete HTTP/1.1 answer with a JSON error as raw bytes and closes; once.
    public func answer(_ status: Int, _ message: String, context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        deadline?.cancel()
        let body = "{\"error\":\"\(message)\"}"
        var text = "HTTP/1.1 \(status) \(HTTPResponseStatus(statusCode: status).reasonPhrase)\r\n"
        text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        if status == 429 || status == 503 { text += "Retry-After: 1\r\n" }
        text += "\r\n" + body
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text))).whenComplete { _ in
            bound.value.close(promise: nil)
        }
    }
}

/// The last handler of a server connection: what the HTTP parser refuses (a malformed request
/// line or header, a head over the decoder's limits) is answered 400 or 431 through the
/// connection's `FrontDoor`, and the connection closes, instead of waiting for a request that
/// will never parse.
public final class ParserRefusal: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = NIOAny
    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parser = error as? HTTPParserError else { context.fireErrorCaught(error); return }
        let answered = parser == .headerOverflow
            ? FrontDoor.answer(431, "the request's header fields are too large or too many", pipelineOf: context)
            : FrontDoor.answer(400, "not an HTTP/1 request (\(parser))", pipelineOf: context)
        if !answered { context.fireErrorCaught(error) }
    }
}
