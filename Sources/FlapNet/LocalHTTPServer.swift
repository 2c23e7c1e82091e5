import FlapDoor
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// A small HTTP/1.1 server on SwiftNIO, for an API of a few routes on the local network: it
/// reads each request whole within `limits` (a body up to `maxBody` bytes; a larger one is
/// drained and the request marked `tooLarge`), hands it to one async handler, and writes the handler's answer
/// with its length, keeping the connection alive when the client asks. It runs as a service
/// until graceful shutdown. (A full web framework formats a `Date` header, and that loads the
/// ICU time-zone data: megabytes of resident memory on the wall for no use.)
public struct LocalHTTPServer: Service {
    /// One request, read whole.
    public struct Request: Sendable {
        public var method: HTTPMethod
        /// The path without its query.
        public var path: String
        public var headers: HTTPHeaders
        public var body: ByteBuffer
        /// The body was larger than the server takes (`body` is then empty).
        public var tooLarge: Bool
        public init(method: HTTPMethod, path: String, headers: HTTPHeaders = [:], body: ByteBuffer = ByteBuffer(), tooLarge: Bool = false) {
            self.method = method; self.path = path; self.headers = headers; self.body = body; self.tooLarge = tooLarge
        }
    }

    /// An answer: status, content type, body — or, for a stream (server-sent events), the
    /// chunks that follow the head until the stream ends or the client goes.
    public struct Response: Sendable {
        public var status: Int
        public var contentType: String
        public var body: [UInt8]
        public var stream: AsyncStream<[UInt8]>?
        /// Headers beyond the content type and length (`Cache-Control`, …).
        public var headers: [(String, String)] = []
        public init(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
            self.status = status; self.contentType = contentType; self.body = body; self.headers = headers
        }
        /// A streamed answer: each chunk is written and flushed as it comes; the connection
        /// closes when the stream ends. Its request's deadline no longer applies.
        public init(status: Int, contentType: String, stream: AsyncStream<[UInt8]>) {
            self.init(status: status, contentType: contentType, body: [], headers: [("Cache-Control", "no-store")])
            self.stream = stream
        }
    }

    /// What one client may send and how long it may take. A client over a limit gets a clear
    /// status and the connection closes: 413 (body), 431 (head), 400 (malformed, or HTTP/1.1
    /// without `Host`), 408 (too slow), 429 (too many connections from one address), 503 (too
    /// many connections in all).
    public struct Limits: Sendable {
        public var maxBody = 64 * 1024
        /// Most header fields in one request, and their bytes (names and values) together.
        public var maxHeaders = 64
        public var maxHeaderBytes = 16 * 1024
        /// Each whole request must arrive within this of the connection opening or of the
        /// previous answer; an idle keep-alive connection closes after it too.
        public var requestTimeout: TimeAmount = .seconds(10)
        /// Connections in all and per client, and the first head's deadline.
        public var door = DoorLimits()
        /// A streamed answer's client must take each chunk within this, else it is closed.
        public var streamWriteTimeout: TimeAmount = .seconds(30)
        public init() {}

        var decoder: NIOHTTPDecoderLimitConfiguration {
            var d = NIOHTTPDecoderLimitConfiguration()
            d.maxHeaderFieldCount = maxHeaders
            d.maxHeaderFieldSize = maxHeaderBytes
            d.maxHeaderListSize = maxHeaderBytes
            return d
        }
    }

    public let host: String
    public let port: Int
    public let limits: Limits
    public let handler: @Sendable (Request) async -> Response
    /// Called once the server listens, with the port it listens on.
    public let onRunning: @Sendable (Int) -> Void

    public init(host: String, port: Int, limits: Limits = Limits(), onRunning: @escaping @Sendable (Int) -> Void,
                handler: @escaping @Sendable (Request) async -> Response) {
        self.host = host; self.port = port; self.limits = limits; self.onRunning = onRunning; self.handler = handler
    }

    public func run() async throws {
        let limits = limits, handler = handler
        let census = ConnectionCensus(limits: limits.door)
        let decoderLimits = limits.decoder
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try FrontDoor.install(on: channel, census: census, limits: limits.door) {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                            withErrorHandling: false, withEncoderConfiguration: .init(), withDecoderLimitConfiguration: decoderLimits)
                        try channel.pipeline.syncOperations.addHandler(Connection(limits: limits, handler: handler))
                    }
                }
            }
            .bind(host: host, port: port).get()
        onRunning(channel.localAddress?.port ?? port)
        try? await gracefulShutdown()
        try? await channel.close()
    }

    /// Reads one request at a time off a connection and answers it, within `limits`.
    final class Connection: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let limits: Limits
        let handler: @Sendable (Request) async -> Response
        private var head: HTTPRequestHead?
        private var body = ByteBuffer()
        private var tooLarge = false
        /// Set while a refused request's remaining parts are read and dropped.
        private var refused = false
        /// Fires when the next whole request is late.
        private var deadline: Scheduled<Void>?

        init(limits: Limits, handler: @escaping @Sendable (Request) async -> Response) {
            self.limits = limits; self.handler = handler
        }

        func handlerAdded(context: ChannelHandlerContext) { if context.channel.isActive { armTimeout(context: context) } }
        func channelActive(context: ChannelHandlerContext) { armTimeout(context: context); context.fireChannelActive() }
        func channelInactive(context: ChannelHandlerContext) { deadline?.cancel(); context.fireChannelInactive() }

        /// Waits `requestTimeout` for the next whole request; then answers 408 and closes.
        private func armTimeout(context: ChannelHandlerContext) {
            deadline?.cancel()
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: limits.requestTimeout) {
                let (connection, context) = bound.value
                connection.refused = true
                // Raw, through the front door: no request may be in flight to answer.
                FrontDoor.timeOut("the request did not arrive within \(connection.limits.requestTimeout.nanoseconds / 1_000_000_000) s",
                                 pipelineOf: context)
            }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if refused { return }
            switch unwrapInboundIn(data) {
            case .head(let h):
                head = h; body.clear(); tooLarge = false
                if let problem = headProblem(h) {
                    refuse(problem.status, problem.message, version: h.version, context: context)
                }
            case .body(var part):
                if tooLarge { return }
                if body.readableBytes + part.readableBytes > limits.maxBody { tooLarge = true; body = ByteBuffer() } else { body.writeBuffer(&part) }
            case .end:
                guard let head else { return }
                self.head = nil
                deadline?.cancel()
                let path = String(head.uri.prefix { $0 != "?" })
                let request = Request(method: head.method, path: path, headers: head.headers, body: body, tooLarge: tooLarge)
                let handler = handler, loop = context.eventLoop
                let bound = NIOLoopBound((self, context), eventLoop: loop)
                loop.makeFutureWithTask { await handler(request) }.whenSuccess { response in
                    let (connection, context) = bound.value
                    connection.write(response, for: head, context: context)
                }
            }
        }

        /// What is wrong with a request's head before its body is read, if anything.
        private func headProblem(_ h: HTTPRequestHead) -> (status: Int, message: String)? {
            if h.version == .http1_1, h.headers["Host"].count != 1 { return (400, "an HTTP/1.1 request needs exactly one Host header") }
            return nil
        }

        /// Answers `status` with a JSON error and closes the connection.
        private func refuse(_ status: Int, _ message: String, version: HTTPVersion, context: ChannelHandlerContext) {
            refused = true
            deadline?.cancel()
            let body = Array(SortedJSON.data(encoding: ["error": message]))
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(body.count))
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .init(statusCode: status), headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
        }

        private func write(_ response: Response, for head: HTTPRequestHead, context: ChannelHandlerContext) {
            if let stream = response.stream { return write(stream, response, for: head, context: context) }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: response.contentType)
            for (name, value) in response.headers { headers.add(name: name, value: value) }
            headers.add(name: "Content-Length", value: String(response.body.count))
            let keepAlive = head.isKeepAlive
            headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
            let responseHead = HTTPResponseHead(version: head.version, status: .init(statusCode: response.status), headers: headers)
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                let (connection, context) = bound.value
                if keepAlive { connection.armTimeout(context: context) } else { context.close(promise: nil) }
            }
        }

        /// Writes a streamed answer: the head (chunked on HTTP/1.1), then each chunk as it comes,
        /// waiting for the socket to take it; the end and a close when the stream ends. The
        /// stream's consumer goes when the client does. Nothing more is read off the connection.
        private func write(_ stream: AsyncStream<[UInt8]>, _ response: Response, for head: HTTPRequestHead, context: ChannelHandlerContext) {
            refused = true
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: response.contentType)
            for (name, value) in response.headers { headers.add(name: name, value: value) }
            headers.add(name: "Connection", value: "close")
            let responseHead = HTTPResponseHead(version: head.version, status: .init(statusCode: response.status), headers: headers)
            context.writeAndFlush(wrapOutboundOut(.head(responseHead)), promise: nil)
            let channel = context.channel, timeout = limits.streamWriteTimeout
            let pump = Task {
                for await chunk in stream {
                    let part = HTTPServerResponsePart.body(.byteBuffer(channel.allocator.buffer(bytes: chunk)))
                    // A client that stops reading is closed, not waited for.
                    let stuck = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
                    defer { stuck.cancel() }
                    do { try await channel.writeAndFlush(part).get() } catch { break }
                }
                try? await channel.writeAndFlush(HTTPServerResponsePart.end(nil)).get()
                try? await channel.close()
            }
            channel.closeFuture.whenComplete { _ in pump.cancel() }
        }
    }
}
