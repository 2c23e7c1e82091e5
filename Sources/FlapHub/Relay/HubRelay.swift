import FlapCore
import Foundation
import Logging
import ServiceLifecycle

/// What one instance tells every instance: a frame for a user's connections, or a new message
/// for its recipient's (each instance sends it to the connections it holds, and the first to
/// deliver it marks it delivered), with its `message.new` frame when that is small enough: a
/// notification holds at most 8000 bytes.
enum RelayEvent: Sendable, Equatable, Codable {
    case frame(user: String, text: String)
    case message(id: String, recipient: String, frame: String?)

    /// The largest frame a message event carries (PostgreSQL's limit, less the event around it).
    static let maxFrame = 7000

    var json: String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }
    static func decode(_ text: String) -> RelayEvent? { try? JSONDecoder().decode(RelayEvent.self, from: Data(text.utf8)) }
}

/// Events between the flaphub instances on one PostgreSQL database, by its `LISTEN/NOTIFY`
/// (the engine's own mechanism: no broker beside it). A notification is sent once and heard by
/// every instance listening at that moment; when an instance's listening connection is lost, it
/// closes its WebSockets (and again once it listens anew), so boards reconnect and catch up on
/// what they may have missed through REST.
final class PostgresRelay: Sendable {
    static let channel = "flaphub_events"
    let database: PostgresDatabase
    let logger: Logger

    init(database: PostgresDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    func publish(_ event: RelayEvent) async throws {
        try await database.notify(Self.channel, event.json)
    }

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
                    guard let event = RelayEvent.decode(payload) else {
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
    func publish(_ event: RelayEvent) async throws {
        if let relay { try await relay.publish(event) } else { await relayed(event) }
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
                if relay == nil {
                    try await delivered(try await store.markDelivered([id], now: t))
                } else {
                    // The next event need not wait for the sender to hear "delivered".
                    Task { [self] in
                        do { try await delivered(try await store.markDelivered([id], now: t)) } catch {
                            logger.warning("could not mark message \(id) delivered: \(error)")
                        }
                    }
                }
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
