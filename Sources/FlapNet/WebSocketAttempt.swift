import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization
@_spi(WSInternal) import WSCore

/// One WebSocket connection to the message API that can be ended at any point before the
/// server's 101 — while the name is looked up, while TCP or TLS connects, while the upgrade waits
/// — without shutting an event loop down; after the upgrade its frames are WSCore's own handler's.
///
/// Why not `WSClient.WebSocketClient.connect`: it keeps the channel to itself, so the only way
/// to end an attempt early was to shut its event loop down, and NIO drops work handed to a loop
/// after that (the name looked up off the loop, the connect itself) with the task awaiting it
/// left suspended for ever — seen as a flapd that never exited after SIGTERM, 4 of 40 stops
/// sent as it reconnected. Here the attempt runs on NIO's shared loops, which never shut down,
/// and is ended by closing its channel; before there is one, NIO's connect timeout (which covers
/// the name lookup) bounds the wait.
final class WebSocketAttempt: Sendable {
    /// Why an attempt ended before its upgrade.
    enum Ending: Sendable { case late, stopped }

    private enum State {
        case connecting(Channel?)
        case upgraded
        case ended(Ending)
    }

    private let state = Mutex(State.connecting(nil))

    /// Ends the attempt if it is not upgraded yet (the first ending wins); whether it did.
    @discardableResult
    func end(_ how: Ending) -> Bool {
        let channel: Channel?? = state.withLock { s in
            guard case .connecting(let channel) = s else { return nil }
            s = .ended(how)
            return .some(channel)
        }
        guard let channel else { return false }
        channel?.close(promise: nil)
        return true
    }

    /// How the attempt ended early, if it did.
    var ending: Ending? {
        state.withLock { s in if case .ended(let how) = s { how } else { nil } }
    }

    /// Whether NIO has made the attempt's channel (it is connecting or upgrading).
    var hasChannel: Bool {
        state.withLock { s in if case .connecting(.some) = s { true } else { false } }
    }

    /// Takes on the channel NIO made; false once the attempt has ended.
    private func claim(_ channel: Channel) -> Bool {
        state.withLock { s in
            guard case .connecting = s else { return false }
            s = .connecting(channel)
            return true
        }
    }

    private func upgraded() -> Bool {
        state.withLock { s in
            guard case .connecting = s else { return false }
            s = .upgraded
            return true
        }
    }

    struct Context: WebSocketContext { let logger: Logger }

    /// The pieces of a `ws://` or `wss://` URL a connection needs.
    struct Target: Sendable {
        var host: String, port: Int, tls: Bool, path: String, hostHeader: String, origin: String

        init?(_ url: String) {
            guard let c = URLComponents(string: url), let scheme = c.scheme, scheme == "ws" || scheme == "wss",
                  var host = c.host, !host.isEmpty else { return nil }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            tls = scheme == "wss"
            self.host = host
            port = c.port ?? (tls ? 443 : 80)
            path = (c.percentEncodedPath.isEmpty ? "/" : c.percentEncodedPath) + (c.percentEncodedQuery.map { "?\($0)" } ?? "")
            let named = host.contains(":") ? "[\(host)]" : host
            hostHeader = c.port.map { "\(named):\($0)" } ?? named
            origin = "\(scheme)://\(named)"
        }
    }

    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case notUpgraded
    }

    struct BadURL: Error, CustomStringConvertible {
        var url: String
        var description: String { "not a ws:// or wss:// URL: \(url)" }
    }

    struct NotUpgraded: Error, CustomStringConvertible {
        var description: String { "the server answered the WebSocket upgrade without upgrading" }
    }

    /// Connects, upgrades and runs `handler` on the frames; the server's close frame, if any.
    /// An attempt ended early throws (its `ending` says why).
    func run(url: String, tls: TLSConfiguration?, maxFrameBytes: Int, connectTimeout: TimeAmount, logger: Logger,
             handler: @escaping WebSocketDataHandler<Context>) async throws -> WebSocketCloseFrame? {
        guard let target = Target(url) else { throw BadURL(url: url) }
        guard ending == nil else { throw CancellationError() }
        let ssl = try tls.map { try NIOSSLContext(configuration: $0) }
        // A name is required for SNI; an address literal is sent without one.
        let sniName = (try? SocketAddress(ipAddress: target.host, port: 0)) == nil ? target.host : nil
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(connectTimeout)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
        let upgrade: EventLoopFuture<Upgrade> = try await bootstrap.connect(host: target.host, port: target.port) { channel in
            channel.eventLoop.makeCompletedFuture {
                guard self.claim(channel) else { throw CancellationError() }
                if let ssl {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: ssl, serverHostname: sniName), position: .first)
                }
                let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxFrameBytes) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        .websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                    }
                }
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: target.hostHeader)
                headers.add(name: "Origin", value: target.origin)
                let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: .init(
                    upgradeRequestHead: head, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { $0.eventLoop.makeSucceededFuture(.notUpgraded) }))
                pipeline.leftOverBytesStrategy = .forwardBytes
                return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
            }
        }
        switch try await upgrade.get() {
        case .notUpgraded:
            throw NotUpgraded()
        case .websocket(let channel):
            guard upgraded() else {
                try? await channel.channel.close()
                throw CancellationError()
            }
            return try await WebSocketHandler.handle(
                type: .client,
                configuration: .init(extensions: [], autoPing: .disabled, closeTimeout: .seconds(5), validateUTF8: false,
                                     ignoreUncleanSSLShutdownErrors: true, maxFrameSize: maxFrameBytes),
                asyncChannel: channel, context: Context(logger: logger), handler: handler)
        }
    }
}

