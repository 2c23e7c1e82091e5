import FlapDoor
import NIOCore
import NIOHTTP1
import ServiceLifecycle

extension LocalHTTPServer {
    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// One connection's requests, read and answered one at a time in its own task, from its
    /// opening to its close. Each whole request must arrive within `requestTimeout` of the
    /// opening or of the previous answer (else the front door answers 408, or just closes an
    /// idle keep-alive connection). At a graceful shutdown the connection is told to quiesce —
    /// NIO's HTTP pipeline handler then closes it at once when idle, else once the answer in
    /// flight is written — and is closed anyway after `Limits.drain`.
    struct Exchange {
        let connection: Connection
        let limits: LocalHTTPServer.Limits
        let handler: @Sendable (Request) async -> Response

        func run() async {
            let channel = connection.channel, drain = limits.drain
            try? await connection.executeThenClose { inbound, outbound in
                try await withGracefulShutdownHandler {
                    var parts = inbound.makeAsyncIterator()
                    while let (head, request) = try await nextRequest(&parts, outbound) {
                        let response = await handler(request)
                        if let stream = response.stream {
                            return await write(stream, response, for: head, outbound)
                        }
                        guard try await write(response, for: head, outbound) else { return }
                    }
                } onGracefulShutdown: {
                    channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
                    channel.eventLoop.scheduleTask(in: drain) { channel.close(promise: nil) }
                }
            }
        }

        /// The next whole request, read within `requestTimeout`; nil once the client has closed
        /// or the request was refused (then answered, and the connection is to close).
        private func nextRequest(_ parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator,
                                 _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws
            -> (HTTPRequestHead, Request)? {
            let channel = connection.channel, timeout = limits.requestTimeout
            let late = channel.eventLoop.scheduleTask(in: timeout) {
                FrontDoor.timeOut("the request did not arrive within \(timeout.nanoseconds / 1_000_000_000) s", channel: channel)
            }
            defer { late.cancel() }
            var head: HTTPRequestHead?, body = ByteBuffer(), tooLarge = false
            while let part = try await parts.next() {
                switch part {
                case .head(let h):
                    if let problem = Self.headProblem(h) {
                        try await refuse(problem.status, problem.message, version: h.version, outbound)
                        return nil
                    }
                    head = h; body.clear(); tooLarge = false
                case .body(var chunk):
                    if tooLarge { continue }
                    if body.readableBytes + chunk.readableBytes > limits.maxBody { tooLarge = true; body = ByteBuffer() } else { body.writeBuffer(&chunk) }
                case .end:
                    guard let head else { continue }
                    let path = String(head.uri.prefix { $0 != "?" })
                    return (head, Request(method: head.method, path: path, headers: head.headers, body: body, tooLarge: tooLarge))
                }
            }
            return nil
        }

        /// What is wrong with a request's head before its body is read, if anything.
        private static func headProblem(_ h: HTTPRequestHead) -> (status: Int, message: String)? {
            if h.version == .http1_1, h.headers["Host"].count != 1 { return (400, "an HTTP/1.1 request needs exactly one Host header") }
            return nil
        }

        /// Answers `status` with a JSON error; the connection then closes.
        private func refuse(_ status: Int, _ message: String, version: HTTPVersion,
                            _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws {
            let body = Array(SortedJSON.data(encoding: ["error": message]))
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(body.count))
            headers.add(name: "Connection", value: "close")
            try await outbound.write(contentsOf: [
                .head(HTTPResponseHead(version: version, status: .init(statusCode: status), headers: headers)),
                .body(.byteBuffer(ByteBuffer(bytes: body))), .end(nil),
            ])
        }

        /// Writes a whole answer; whether the connection stays open for the next request.
        private func write(_ response: Response, for head: HTTPRequestHead,
                           _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws -> Bool {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: response.contentType)
            for (name, value) in response.headers { headers.add(name: name, value: value) }
            headers.add(name: "Content-Length", value: String(response.body.count))
            let keepAlive = head.isKeepAlive
            headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
            try await outbound.write(contentsOf: [
                .head(HTTPResponseHead(version: head.version, status: .init(statusCode: response.status), headers: headers)),
                .body(.byteBuffer(ByteBuffer(bytes: response.body))), .end(nil),
            ])
            return keepAlive
        }

        /// Writes a streamed answer: the head (chunked on HTTP/1.1), then each chunk as it comes,
        /// waiting for the socket to take it — a client that takes none within
        /// `streamWriteTimeout` is closed, not waited for — and the end when the stream ends. The
        /// stream's consumer goes when the client does. Nothing more is read off the connection.
        private func write(_ stream: AsyncStream<[UInt8]>, _ response: Response, for head: HTTPRequestHead,
                           _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: response.contentType)
            for (name, value) in response.headers { headers.add(name: name, value: value) }
            headers.add(name: "Connection", value: "close")
            let responseHead = HTTPResponseHead(version: head.version, status: .init(statusCode: response.status), headers: headers)
            let channel = connection.channel, timeout = limits.streamWriteTimeout
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await channel.closeFuture.get() }  // the client went
                group.addTask {
                    guard (try? await outbound.write(.head(responseHead))) != nil else { return }
                    for await chunk in stream {
                        let stuck = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
                        defer { stuck.cancel() }
                        guard (try? await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: chunk))))) != nil else { return }
                    }
                    try? await outbound.write(.end(nil))
                }
                await group.next()
                // Either way the connection ends: that ends the other child too (a future's wait
                // does not heed cancellation; the close completes it).
                channel.close(promise: nil)
                group.cancelAll()
            }
        }
    }
}
