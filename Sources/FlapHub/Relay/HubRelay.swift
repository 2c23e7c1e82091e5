import FlapCore
import FlapHubInput
import FlapMessages
import Foundation
import Logging
import ServiceLifecycle

/// Events between the flaphub instances on one PostgreSQL database, by its `LISTEN/NOTIFY`
/// (the engine's own mechanism: no broker beside it). A notification is sent once and heard by
/// every instance listening at that moment; when an instance's listening connection is lost, it
/// closes its WebSockets (and again once it listens anew), so boards reconnect and catch up on
/// what they may have missed through REST.
final class PostgresRelay: Sendable {
    static let channel = "flaphub_events"
    let database: PostgresDatabase
    let logger: Logger
    /// This instance, before each event it sends: it has passed its own events on already.
    let origin = UUID().uuidString.lowercased()

    init(database: PostgresDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Tells the other instances, in order, in one statement.
    func publish(_ events: [RelayEvent]) async throws {
        try await database.notify(Self.channel, events.map(payload))
    }

    /// What a notification of `event` holds: `origin event`.
    func payload(_ event: RelayEvent) -> String { origin + " " + event.notice }

    /// Hears every instance's events until cancelled; `gap` when some may have been missed.
    func listen(receive: @escaping @Sendable (RelayEvent) async -> Void, gap: @escaping @Sendable () async -> Void) async {
        var delay = 0.25
        var lost = false
        while !Task.isCancelled {
            do {
                try await database.listen(Self.channel, started: {
                    logger.notice("listening for every instance's events", metadata: ["channel": "\(Self.channel)"])
                    delay = 0.25
                    if lost { await gap() }
                }, receive: { payload in
                    let (from, body) = (payload.prefix { $0 != " " }, payload.drop { $0 != " " }.dropFirst())
                    guard from != origin else { return }
                    guard let event = RelayEvent.read(body) else {
                        logger.warning("a notification that is not an event", metadata: ["bytes": "\(payload.utf8.count)"])
                        return
                    }
                    await receive(event)
                })
            } catch {
                if Task.isCancelled { break }
                logger.warning("lost the event channel: \(error); listening again in \(delay) s")
            }
            if Task.isCancelled { break }
            lost = true
            await gap()
            try? await Task.sleep(for: .seconds(delay))
            delay = min(delay * 2, 5)
        }
    }
}

extension Hub {
    /// Sends an event to every instance's connections (straight to this one's when it is alone).
    /// Passes an event to this instance's connections at once, then to the other instances.
    func publish(_ event: RelayEvent) async throws { try await publish([event]) }

    /// `publish` of several events, in order: the other instances are told in one statement.
    func publish(_ events: [RelayEvent]) async throws {
        for event in events { await relayed(event) }
        if let relay { try await relay.publish(events) }
    }

    /// An event from any instance, for the connections this one holds.
    func relayed(_ event: RelayEvent) async {
        switch event {
        case .frame(let user, let text):
            await sockets.send(text, to: user)
        case .message(let id, let recipient, let frame):
            guard await sockets.has(recipient) else { return }
            do {
                let t = now()
                var text = frame
                if text == nil {
                    guard let m = try await store.message(id, now: t) else { return }
                    text = WireFrame.new(try await store.api(m)).text
                }
                guard await sockets.send(text!, to: recipient) > 0 else { return }
                // Neither the next event nor the send's answer waits for the sender to hear
                // "delivered": marked in batches by `Marking` (on SQLite, a mark a message was
                // a statement of its own, a second commit the send's answer waited for).
                await marks.add(id)
            } catch {
                logger.warning("could not pass message \(id) on: \(error)")
            }
        }
    }

    /// The relay as a member of the server's ServiceGroup.
    struct Relaying: Service {
        let hub: Hub
        let relay: PostgresRelay
        func run() async throws {
            await cancelWhenGracefulShutdown {
                await relay.listen(receive: { await hub.relayed($0) }, gap: {
                    let n = await hub.sockets.closeAll()
                    if n > 0 { hub.logger.notice("closed \(n) WebSockets so their boards catch up") }
                })
            }
        }
    }
}
