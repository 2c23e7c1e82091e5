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
/// until graceful shutdown; each connection is a child task of its run, and each request is
/// answered in its connection's task. At the shutdown it stops listening and winds its
/// connections down: an idle one closes at once, one with a request in flight once its answer is
/// written, a stream once it ends — all within `Limits.drain`, after which what is left is
/// closed; `run` returns once every connection has. (A full web framework formats a `Date`
/// header, and that loads the ICU time-zone data: megabytes of resident memory on the wall for
/// no use.)
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
        /// At shutdown, how long the requests in flight are given to be answered.
        public var drain: TimeAmount = .seconds(5)
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
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try FrontDoor.install(on: channel, census: census, limits: limits.door) {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                            withErrorHandling: false, withEncoderConfiguration: .init(), withDecoderLimitConfiguration: decoderLimits)
                    }
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
                }
            }
        onRunning(server.channel.localAddress?.port ?? port)
        await withDiscardingTaskGroup { group in
            try? await withGracefulShutdownHandler {
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await Exchange(connection: connection, limits: limits, handler: handler).run() }
                    }
                }
            } onGracefulShutdown: {
                server.channel.close(promise: nil)
            }
        }
    }
}
