import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// A small HTTP/1.1 server on SwiftNIO, for an API of a few routes on the local network: it
/// reads each request whole (a body up to `maxBody` bytes; a larger one is drained and the
/// request marked `tooLarge`), hands it to one async handler, and writes the handler's answer
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
    }

    /// An answer: status, content type, body.
    public struct Response: Sendable {
        public var status: Int
        public var contentType: String
        public var body: [UInt8]
        public init(status: Int, contentType: String, body: [UInt8]) {
            self.status = status; self.contentType = contentType; self.body = body
        }
    }

    public let host: String
    public let port: Int
    public let maxBody: Int
    public let handler: @Sendable (Request) async -> Response
    /// Called once the server listens, with the port it listens on.
    public let onRunning: @Sendable (Int) -> Void

    public init(host: String, port: Int, maxBody: Int, onRunning: @escaping @Sendable (Int) -> Void,
                handler: @escaping @Sendable (Request) async -> Response) {
        self.host = host; self.port = port; self.maxBody = maxBody; self.onRunning = onRunning; self.handler = handler
    }

    public func run() async throws {
        let maxBody = maxBody, handler = handler
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(Connection(maxBody: maxBody, handler: handler))
                }
            }
            .bind(host: host, port: port).get()
        onRunning(channel.localAddress?.port ?? port)
        try? await gracefulShutdown()
        try? await channel.close()
    }

    /// Reads one request at a time off a connection and answers it.
    final class Connection: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let maxBody: Int
        let handler: @Sendable (Request) async -> Response
        private var head: HTTPRequestHead?
        private var body = ByteBuffer()
        private var tooLarge = false

        init(maxBody: Int, handler: @escaping @Sendable (Request) async -> Response) {
            self.maxBody = maxBody; self.handler = handler
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let h):
                head = h; body.clear(); tooLarge = false
            case .body(var part):
                if tooLarge { return }
                if body.readableBytes + part.readableBytes > maxBody { tooLarge = true; body = ByteBuffer() } else { body.writeBuffer(&part) }
            case .end:
                guard let head else { return }
                self.head = nil
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

        private func write(_ response: Response, for head: HTTPRequestHead, context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: response.contentType)
            headers.add(name: "Content-Length", value: String(response.body.count))
            let keepAlive = head.isKeepAlive
            headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
            let responseHead = HTTPResponseHead(version: head.version, status: .init(statusCode: response.status), headers: headers)
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { bound.value.close(promise: nil) }
            }
        }
    }
}
