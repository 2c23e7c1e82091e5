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

    /// Connections open now.
    public var count: Int { open.withLockedValue { $0.total } }
}

/// The first handler of a server connection, on its raw bytes: it admits the connection
/// through the census (or refuses it), gives the first request head `headTimeout` to arrive,
/// writes the answers of `ParserRefusal` straight to the socket, and once the connection is a
/// WebSocket closes it (1002) at the first unmasked client frame. Bytes pass through it
/// unchanged.
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
    /// The last three bytes read, to find the blank line that ends the first head.
    private var tail: [UInt8] = []
    private var headSeen = false
    /// Set once the server switched the connection to WebSocket (it wrote a 101).
    private var maskCheck: MaskCheck?

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
            door.answer(408, "no request head within \(seconds) s", context: context)
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        if admitted { census.leave(client); admitted = false }
        context.fireChannelInactive()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if maskCheck == nil, unwrapOutboundIn(data).readableBytesView.starts(with: Array("HTTP/1.1 101 ".utf8)) {
            maskCheck = MaskCheck()
        }
        context.write(data, promise: promise)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if answered { return }
        if maskCheck != nil, !maskCheck!.read(unwrapInboundIn(data).readableBytesView) {
            // Close 1002 (protocol error), as RFC 6455 §5.1 asks of a server.
            answered = true
            let reason = Array("unmasked client frame".utf8)
            let close: [UInt8] = [0x88, UInt8(2 + reason.count), 0x03, 0xEA] + reason
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: close))).whenComplete { _ in
                bound.value.close(promise: nil)
            }
            return
        }
        if !headSeen {
            let bytes = unwrapInboundIn(data)
            tail.append(contentsOf: bytes.readableBytesView)
            if let end = tail.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]) {
                _ = end
                headSeen = true
                deadline?.cancel()
                tail = []
            } else {
                tail = Array(tail.suffix(3))
            }
        }
        context.fireChannelRead(data)
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
        guard let parser = error as? HTTPParserError,
              let door = try? context.pipeline.syncOperations.handler(type: FrontDoor.self),
              let doorContext = try? context.pipeline.syncOperations.context(handlerType: FrontDoor.self) else {
            context.fireErrorCaught(error)
            return
        }
        switch parser {
        case .headerOverflow: door.answer(431, "the request's header fields are too large or too many", context: doorContext)
        default: door.answer(400, "not an HTTP/1 request (\(parser))", context: doorContext)
        }
    }
}
