import FlapHubInput
import Testing
import TestWaits
@testable import FlapHub

/// Issue 37, item 2: on PostgreSQL, sends to known recipients go to the database in batches —
/// each answered as it would be alone, the ones that come while a batch is stored going together.
@Suite struct KnownSendsTests {
    /// A store on PostgreSQL with senders a and d, each a friend of b; c is a friend of no one.
    struct Fixture {
        let store: HubStore, db: PostgresDatabase
        let a: HubStore.User, b: HubStore.User, c: HubStore.User, d: HubStore.User

        init() async throws {
            store = try await Engine.postgres.store()
            db = try #require(store.db as? PostgresDatabase)
            (a, _) = try await store.addUser("a", now: 0)
            (b, _) = try await store.addUser("b", now: 0)
            (c, _) = try await store.addUser("c", now: 0)
            (d, _) = try await store.addUser("d", now: 0)
            try await store.befriend(a.id, b.id, now: 0)
            try await store.befriend(d.id, b.id, now: 0)
        }

        func send(from sender: HubStore.User, to recipient: HubStore.User, id: String? = nil, perHour: Int = 10,
                  asked: ContinuousClock.Instant = .now) -> KnownSend {
            let m = HubStore.Message(id: id ?? HubStore.newMessageID(at: 100), senderID: sender.id, recipientID: recipient.id,
                                     content: "M", contentType: .text, createdAt: 100, expiresAt: 1e12)
            return KnownSend([m], transitions: [nil], by: sender.id, now: 100, perHour: perHour, notifying: nil, asked: asked)
        }

        func stored() async throws -> [String] {
            try await db.query("SELECT id FROM messages ORDER BY id", []).compactMap { $0.first?.text }
        }

        /// Takes `sender`'s lock of the sends (as a batch does) in another session, in a task of
        /// `group` that ends with nil; returns once it is held, with what lets it go.
        func hold<T>(lockOf sender: HubStore.User, in group: inout ThrowingTaskGroup<T?, any Error>) async -> @Sendable () -> Void {
            let (locked, lockedSignal) = AsyncStream.makeStream(of: Void.self)
            let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
            group.addTask { [db] in
                try await db.transaction { c in
                    try await c.query("SELECT pg_advisory_xact_lock(hashtext('sends:' || ?))", [.text(sender.id)])
                    lockedSignal.yield()
                    for await _ in release { break }
                }
                return nil
            }
            for await _ in locked { break }
            return { releaseSignal.yield() }
        }
    }

    /// One statement for five sends: each answered as `flaphub_send_known` answers it alone, a
    /// sender's sends counted in the order they came.
    @Test func aBatchAnswersEachSendAsItWouldAlone() async throws {
        let f = try await Fixture()
        let sends = [f.send(from: f.a, to: f.b, perHour: 2), f.send(from: f.a, to: f.c, perHour: 2), f.send(from: f.a, to: f.b, perHour: 2),
                     f.send(from: f.d, to: f.b, perHour: 2), f.send(from: f.a, to: f.b, perHour: 2)]
        let answers = try await KnownSends.storeTogether(sends, on: f.db)
        #expect(answers.map(\.statuses) == [[0], [3], [0], [0], [0]], "c is no one's friend")
        #expect(answers.map(\.fullAt) == [nil, nil, nil, nil, 100], "a's third send is past 2 an hour; the one to c was not stored")
        #expect(try await f.stored() == [sends[0], sends[2], sends[3]].map(\.messages[0].id).sorted())
    }

    /// A send whose statement fails (its message id taken) fails alone: the others of its batch
    /// are stored, each tried again on its own.
    @Test func aSendThatFailsFailsAlone() async throws {
        let f = try await Fixture()
        let first = f.send(from: f.a, to: f.b)
        await KnownSends.commit([first], on: f.db)
        let sends = [f.send(from: f.d, to: f.b), f.send(from: f.a, to: f.b, id: first.messages[0].id), f.send(from: f.a, to: f.b)]
        await KnownSends.commit(sends, on: f.db)
        #expect(try sends[0].outcome?.get().statuses == [0])
        #expect(try sends[2].outcome?.get().statuses == [0])
        #expect(throws: SQLFailure.self) { try sends[1].outcome?.get() }
        #expect(try await f.stored() == [first, sends[0], sends[2]].map(\.messages[0].id).sorted())
    }

    /// A batch waits for the database only what is left of its first send's wait: a send that
    /// has waited the address's whole wait for the batch before is answered "unavailable" at
    /// once (503), not after a wait of its own on top.
    @Test func aSendThatHasWaitedItsWholeWaitIsAnsweredUnavailable() async throws {
        let f = try await Fixture()
        let late = f.send(from: f.a, to: f.b, asked: .now - f.db.deadline)
        await KnownSends.commit([late, f.send(from: f.d, to: f.b)], on: f.db)
        #expect(throws: DatabaseUnavailable.self) { try late.outcome?.get() }
        #expect(try await f.stored().isEmpty, "the batch went no further than its first send's wait")
    }

    /// While a batch waits for its sender's lock (held by another session), 20 more sends come:
    /// they are stored together in one more batch, each answered.
    @Test func sendsThatComeWhileOneIsStoredGoTogether() async throws {
        let f = try await Fixture()
        let sends = f.store.knownSends
        let before = sends.batches.load(ordering: .relaxed)
        /// A send's answer: stored (no hour's limit reached, every recipient as known) or not.
        @Sendable func stored(_ send: KnownSend) async throws -> Bool {
            let answer = try await sends.store(send, on: f.db)
            return answer.fullAt == nil && answer.statuses == [0]
        }
        let answers = try await withThrowingTaskGroup(of: Bool?.self) { group in
            let release = await f.hold(lockOf: f.a, in: &group)
            group.addTask { try await stored(f.send(from: f.a, to: f.b, perHour: 100)) }
            #expect(await eventually { sends.batches.load(ordering: .relaxed) - before == 1 && sends.queued == 0 })
            for n in 1...20 {
                group.addTask { try await stored(f.send(from: n.isMultiple(of: 2) ? f.a : f.d, to: f.b, perHour: 100)) }
            }
            #expect(await eventually { sends.queued == 20 }, "the 20 wait behind the batch that waits for a's lock")
            release()
            return try await group.compactMap { $0 }.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers.count == 21 && answers.allSatisfy { $0 })
        #expect(sends.batches.load(ordering: .relaxed) - before == 2, "the first send's batch, then the 20's")
        #expect(try await f.stored().count == 21)
    }

    /// Two batches with the same two senders in opposite orders — the first sender's lock held
    /// by another session until both wait — are both stored: each takes its senders' locks in
    /// the order of their keys, so neither can hold the lock the other waits for while waiting
    /// for one it holds. (Taken in the sends' order, the first batch would get a's lock on its
    /// release while the second held d's and waited for a's: PostgreSQL's deadlock, 40P01.)
    @Test func batchesWithTheirSendersInOppositeOrdersNeverWaitInACircle() async throws {
        let f = try await Fixture()
        let first = [f.send(from: f.a, to: f.b), f.send(from: f.d, to: f.b)], second = [f.send(from: f.d, to: f.b), f.send(from: f.a, to: f.b)]
        @Sendable func waiting() async -> Int {
            let rows = try? await f.db.query("""
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """, [])
            return Int(rows?.first?.first?.int ?? -1)
        }
        let answers = try await withThrowingTaskGroup(of: [[Int]]?.self) { group in
            let release = await f.hold(lockOf: f.a, in: &group)
            group.addTask { try await KnownSends.storeTogether(first, on: f.db).map(\.statuses) }
            #expect(await eventually(asking: { await waiting() == 1 }), "the first batch waits for a lock")
            group.addTask { try await KnownSends.storeTogether(second, on: f.db).map(\.statuses) }
            #expect(await eventually(asking: { await waiting() == 2 }), "both batches wait")
            release()
            return try await group.compactMap { $0 }.reduce(into: [[[Int]]]()) { $0.append($1) }
        }
        #expect(answers == [[[0], [0]], [[0], [0]]], "both batches stored, neither ended by a deadlock")
        #expect(try await f.stored() == (first + second).map(\.messages[0].id).sorted())
    }
}
