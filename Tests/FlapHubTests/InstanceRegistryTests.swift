import Logging
import PostgresTesting
import Synchronization
import TestWaits
import Testing
@testable import FlapHub

/// Instances on one PostgreSQL database each listen on a channel of their own: an event goes to
/// the others only, an instance of an earlier version is still heard, gone sessions are swept.
@Suite struct InstanceRegistryTests {
    /// An instance's relay listening (from its registration on), and the events it was passed.
    final class Listening: Sendable {
        let relay: PostgresRelay
        let events = Mutex<[RelayEvent]>([])
        let task = Mutex<Task<Void, Never>?>(nil)
        init(_ db: PostgresDatabase) async {
            relay = PostgresRelay(database: db, logger: Logger(label: "test"))
            let (started, go) = AsyncStream<Void>.makeStream()
            let listening = Task { [self] in
                await relay.listen(receive: { e in self.events.withLock { $0.append(e) } }, gap: { go.yield() })
            }
            task.withLock { $0 = listening }
            for await _ in started { break }
        }
        func stop() { task.withLock { $0?.cancel() } }
    }

    @Test func anEventGoesToTheOtherInstancesOnly() async throws {
        let store = try await Engine.postgres.store()
        let db = try #require(store.db as? PostgresDatabase)
        let a = await Listening(db), b = await Listening(db)
        defer { a.stop(); b.stop() }
        let channels = try await db.query("SELECT channel FROM flaphub_instances ORDER BY channel").compactMap { $0.first?.text }
        #expect(channels == [a.relay.channel, b.relay.channel].sorted())

        // What reaches A's channel: not A's own event, then B's.
        let onA = Mutex<[String]>([])
        let (listening, heard) = AsyncStream<Void>.makeStream()
        let raw = Task { try await db.listen(a.relay.channel, started: { _ in heard.yield() }, receive: { p in onA.withLock { $0.append(p) } }) }
        defer { raw.cancel() }
        for await _ in listening { break }
        let one = RelayEvent.frame(user: "u", text: "one"), two = RelayEvent.frame(user: "u", text: "two")
        try await a.relay.publish([one])
        try await b.relay.publish([two])
        #expect(await eventually { onA.withLock { !$0.isEmpty } && a.events.withLock { !$0.isEmpty } && b.events.withLock { !$0.isEmpty } })
        #expect(onA.withLock { $0 } == [b.relay.payload(two)], "A's own event never reached its channel")
        #expect(a.events.withLock { $0 } == [two] && b.events.withLock { $0 } == [one])

        // An instance of an earlier version sends on its own shared channel: heard by both.
        let three = RelayEvent.frame(user: "u", text: "three")
        try await db.query("SELECT flaphub_notify(?, ARRAY[?])", [.text("flaphub_events"), .text("an-older-instance " + three.json)])
        #expect(await eventually { a.events.withLock { $0.count } == 2 && b.events.withLock { $0.count } == 2 })
        #expect(a.events.withLock { $0.last } == three && b.events.withLock { $0.last } == three)
    }

    @Test func goneSessionsAreSweptAndAStoppedInstanceLeaves() async throws {
        let store = try await Engine.postgres.store()
        let db = try #require(store.db as? PostgresDatabase)
        // A killed instance's row: its session has gone (no backend has process id 0).
        try await db.query("INSERT INTO flaphub_instances(channel, pid, registered_at) VALUES('flaphub_gone', 0, 0)")
        let a = await Listening(db)
        defer { a.stop() }
        #expect(try await db.query("SELECT channel FROM flaphub_instances").compactMap { $0.first?.text } == [a.relay.channel],
                "registering swept the gone session's row")
        try await db.query("INSERT INTO flaphub_instances(channel, pid, registered_at) VALUES('flaphub_gone', 0, 0)")
        try await db.query(PostgresRelay.sweep)
        #expect(try await db.query("SELECT count(*) FROM flaphub_instances").first?.first?.int == 1)
        await a.relay.deregister()
        #expect(try await db.query("SELECT count(*) FROM flaphub_instances").first?.first?.int == 0)
    }
}
