import FlapDoor
import HTTPTypes
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// flaphub's HTTP and WebSocket channel behind the project's `FrontDoor`: connection limits,
/// the first head's deadline, and a 400 for what the HTTP parser refuses (Hummingbird's upgrade
/// pipeline would otherwise wait for ever on a request that cannot parse).
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let census: ConnectionCensus
    let limits: DoorLimits

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(FrontDoor(census: census, limits: limits), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(ParserRefusal(), position: .last)
            return value
        }
    }

    func handle(value: Inner.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with a WebSocket upgrade, behind the front door.
    static func guardedWebSocketUpgrade(
        configuration: HTTP1WebSocketUpgradeChannel.Configuration, census: ConnectionCensus, limits: DoorLimits,
        shouldUpgrade: @escaping @Sendable (HTTPRequest, any Channel, Logger) async throws
            -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
    ) -> HTTPServerBuilder {
        .init { responder in
            GuardedChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration, shouldUpgrade: shouldUpgrade),
                           census: census, limits: limits)
        }
    }
}
