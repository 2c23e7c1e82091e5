import FlapCore
import FlapDoor
import FlapInput
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// flaphub: the message API (REST under `/api/v1`, WebSocket at `/ws`) over its store: one
/// SQLite file, or a PostgreSQL database that several instances share (their events then go
/// through the database's LISTEN/NOTIFY, `PostgresRelay`).
public final class Hub: Sendable {
    public let store: HubStore
    let sockets: SocketRegistry
    /// Events to the other instances on the same PostgreSQL database; nil on SQLite.
    let relay: PostgresRelay?
    /// What this instance passed on and has still to mark delivered.
    let marks = DeliveryMarks()
    let logger: Logger
    let now: @Sendable () -> Double
    let limits: HubLimits
    /// The largest request body and WebSocket frame taken.
    let maxBody = 64 * 1024
    let maxFrame = 64 * 1024
    /// Connections in all and per client, and the first head's deadline.
    let doorLimits: DoorLimits
    /// Header limits and keep-alive idle time (the WebSocket's frame size is `maxFrame`).
    var http1Configuration: HTTP1Channel.Configuration {
        .init(idleTimeout: .seconds(30),
              httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 16 * 1024, maxHeaderFieldCount: 64))
    }

    public init(store: HubStore, logger: Logger, limits: HubLimits = HubLimits(),
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.store = store
        sockets = SocketRegistry(logger: logger)
        relay = (store.db as? PostgresDatabase).map { PostgresRelay(database: $0, logger: logger) }
        self.limits = limits
        var door = DoorLimits()
        door.maxConnections = limits.maxConnections
        door.maxConnectionsPerClient = limits.maxConnectionsPerClient
        doorLimits = door
        self.logger = logger
        self.now = now
    }

    /// The server, ready to run (with its purge of expired messages every minute).
    public func application(bind: String, port: Int, onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol {
        var app = Application(
            router: router(),
            server: .hub(self, census: ConnectionCensus(limits: doorLimits), limits: doorLimits),
            configuration: .init(address: .hostname(bind, port: port), serverName: "flaphub"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        // Started first, stopped last: the delivery marks, then the relay; the server stops first
        // of all (and the database's pool after them all, in `HubConfig.withDatabase`).
        app.addServices(Marking(hub: self))
        if let relay { app.addServices(Relaying(hub: self, relay: relay)) }
        app.addServices(Purge(hub: self))
        return app
    }

    /// Deletes expired messages every minute.
    struct Purge: Service {
        let hub: Hub
        func run() async throws {
            await cancelWhenGracefulShutdown { await self.loop() }
        }

        private func loop() async {
            while !Task.isCancelled {
                do {
                    let n = try await hub.store.purge(now: hub.now())
                    if n > 0 { hub.logger.info("purged \(n) expired messages") }
                } catch {
                    hub.logger.error("purge failed: \(error)")
                }
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }
}
