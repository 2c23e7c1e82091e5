#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// A connection to flaphub: HTTP/1 answered by the router (as Hummingbird's channel does), or —
/// a `GET /ws` that asks for it — a WebSocket that is a channel handler (`HubSocketHandler`), not
/// a task: `handle` returns as soon as the upgrade is made, and the board's frames are read by
/// callback. (A task waiting in a read keeps the deepest its stack has ever been until it ends —
/// some 27 KiB a board, measured with `heaptrack` — and a board stays for days.)
struct HubChannel: ServerChildChannel, HTTPChannelHandler {
    enum Upgrade: Sendable {
        case websocket
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// A WebSocket asked for on another path, or refused: 400, as Hummingbird answers it.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgrade: EventLoopFuture<Upgrade>
        let channel: any Channel
    }

    let responder: Responder
    let hub: Hub
    let http1: HTTP1Channel.Configuration

    /// TCP keepalive on every connection: one whose other end is gone without a word (a board's
    /// power cut, its router's) is ended by the kernel — after 60 s without a byte either way, six
    /// unanswered probes 10 s apart; or 120 s after data it was sent went unacknowledged. Its
    /// socket then leaves the registry and its address's count, as a closed one does. Boards
    /// ping every 20 s, so a live one is never probed.
    static let keepalive: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = [
        (.init(level: .socket, name: .so_keepalive), 1),
        (.init(level: .tcp, name: .init(rawValue: TCP_KEEPIDLE)), 60),
        (.init(level: .tcp, name: .init(rawValue: TCP_KEEPINTVL)), 10),
        (.init(level: .tcp, name: .init(rawValue: TCP_KEEPCNT)), 6),
        (.init(level: .tcp, name: .init(rawValue: TCP_USER_TIMEOUT)), 120_000),
    ]

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            for (option, value) in Self.keepalive { try channel.syncOptions?.setOption(option, value: value) }
            let attempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let (hub, http1) = (hub, http1)
            let upgrader = NIOTypedWebSocketServerUpgrader<Upgrade>(
                maxFrameSize: hub.maxFrame,
                shouldUpgrade: { channel, head in
                    attempted.value = true
                    let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                    return channel.eventLoop.makeSucceededFuture(path == "/ws" ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 256, maxAccumulatedFrameSize: hub.maxFrame))
                        try channel.pipeline.syncOperations.addHandler(HubSocketHandler(hub: hub, logger: logger))
                        return .websocket
                    }
                })
            let upgrading = NIOTypedHTTPServerUpgradeConfiguration<Upgrade>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandlers(http1.additionalChannelHandlers())
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { .init($0) }, logger: logger))
                        let async = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        return attempted.value ? .refused(async) : .http(async)
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Upgrade>(upgradeConfiguration: upgrading)
            configuration.enablePipelining = false
            configuration.enableErrorHandling = false
            configuration.enableResponseHeaderValidation = false
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let upgrade = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(upgrade: upgrade, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgrade.get() {
            case .websocket:
                return  // HubSocketHandler has it from here
            case .http(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http):
                try await http.executeThenClose { _, outbound in
                    try await outbound.write(contentsOf: [.head(.init(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])), .end(nil)])
                }
            }
        } catch {
            logger.debug("connection ended before it was answered", metadata: ["error": "\(error)"])
        }
    }
}
