import FlapDoor
import HummingbirdCore
import Logging
import NIOCore

/// How a connection's reads are sized: NIO keeps each channel's last read buffer for the next
/// read, at its allocator's size — 2 KiB by default, held by every idle board for days. 512 bytes
/// holds a board's ping and a sender's request (more is read in a bigger buffer, as before): at
/// 19,000 boards 9.3 KiB of resident memory a board against 11.0 (issue 37).
private let connectionReads = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65536)

/// flaphub's HTTP and WebSocket channel behind the project's `FrontDoor`: connection limits,
/// the first head's deadline, and a 400 for what the HTTP parser refuses (Hummingbird's upgrade
/// pipeline would otherwise wait for ever on a request that cannot parse).
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let census: ConnectionCensus
    let limits: DoorLimits

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        do {
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: connectionReads)
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
    /// HTTP/1 and flaphub's WebSocket (`HubChannel`), behind the front door.
    static func hub(_ hub: Hub, census: ConnectionCensus, limits: DoorLimits) -> HTTPServerBuilder {
        .init { responder in
            GuardedChannel(inner: HubChannel(responder: responder, hub: hub, http1: hub.http1Configuration), census: census, limits: limits)
        }
    }
}
