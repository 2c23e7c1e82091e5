import FlapCore
import FlapHubInput
import FlapMessages
import Foundation
import Logging
import PostgresTesting
import Synchronization
import TestWaits
import Testing
@testable import FlapHub

/// The engines a store can be in; every test of the store runs on each.
enum Engine: String, CaseIterable, Sendable {
    case sqlite, postgres

    /// A new, empty store: a SQLite file, or a database of its own on the test process's
    /// PostgreSQL server.
    func store() async throws -> HubStore {
        switch self {
        case .sqlite: try await HubStore(path: temporaryDatabase())
        case .postgres: try await HubStore(try postgres(await PostgresServer.sharedServer().newDatabase()))
        }
    }

    /// A database on the test process's PostgreSQL server, its pool running until the process ends
    /// (the server runs it in `HubConfig.withDatabase`'s scope; a test's store has none).
    func postgres(_ name: String) throws -> PostgresDatabase {
        let db = PostgresDatabase(try PostgresSettings.parse(PostgresServer.shared.address(name)).get(), logger: Logger(label: "test"))
        Task { await db.runPool() }
        return db
    }
}

func temporaryDatabase() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("hub-\(UUID().uuidString).db").path
}

@Suite struct HubStoreTests {
    func message(_ id: String, from: String, to: String, at t: Double, unlock: Double? = nil) -> HubStore.Message {
        HubStore.Message(id: id, senderID: from, recipientID: to, content: id, contentType: .text, createdAt: t,
                         unlockAt: unlock, expiresAt: t + InboxMessage.lifetime)
    }

    @Test(arguments: Engine.allCases) func usersFriendsAndMessagesSurviveAReopen(_ engine: Engine) async throws {
        let path = engine == .sqlite ? temporaryDatabase() : try await PostgresServer.sharedServer().newDatabase()
        func open() async throws -> HubStore { engine == .sqlite ? try await HubStore(path: path) : try await HubStore(try engine.postgres(path)) }
        let (alice, token) = try await open().addUser("alice", now: 1)
        do {
            let store = try await open()
            let (bob, _) = try await store.addUser("bob", now: 1)
            try await store.befriend(alice.id, bob.id, now: 2)
            try await store.insert(message("m1", from: alice.id, to: bob.id, at: 10))
        }
        let store = try await open()
        #expect(try await store.user(token: token) == alice)
        #expect(try await store.user(token: token + "x") == nil)
        let bob = try #require(try await store.user("BOB"))
        #expect(try await store.areFriends(bob.id, alice.id))
        #expect(try await store.inbox(of: bob.id, now: 20).map(\.id) == ["m1"])
        // The token itself is nowhere in the store.
        if engine == .sqlite {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data(token.utf8)) == nil)
        }
        #expect(try await store.db.query("SELECT count(*) FROM users WHERE token_hash = ?", [.text(token)]).first?.first?.int == 0)
        #expect(try await store.db.query("SELECT count(*) FROM users WHERE token_hash = ?", [.text(TokenHash.hex(token))]).first?.first?.int == 1)
    }

    /// A store with these users, their ids by name.
    func store(_ names: [String], _ engine: Engine) async throws -> (HubStore, [String: String]) {
        let store = try await engine.store()
        var ids: [String: String] = [:]
        for n in names { ids[n] = try await store.addUser(n, now: 0).0.id }
        return (store, ids)
    }

    @Test(arguments: Engine.allCases) func theInboxHasTheLatestOfEachSenderAndEveryHeldMessage(_ engine: Engine) async throws {
        let (store, id) = try await store(["a", "b", "me", "other"], engine)
        func message(_ m: String, from: String, to: String, at t: Double, unlock: Double? = nil) -> HubStore.Message {
            self.message(m, from: id[from]!, to: id[to]!, at: t, unlock: unlock)
        }
        try await store.insert(message("a1", from: "a", to: "me", at: 10))
        try await store.insert(message("a2", from: "a", to: "me", at: 20))
        try await store.insert(message("a3", from: "a", to: "me", at: 30, unlock: 500))
        try await store.insert(message("b1", from: "b", to: "me", at: 15))
        try await store.insert(message("x", from: "a", to: "other", at: 40))
        #expect(try await store.inbox(of: id["me"]!, now: 100).map(\.id) == ["b1", "a2", "a3"])
        #expect(try await store.inbox(of: id["me"]!, now: 600).map(\.id) == ["b1", "a3"])
        #expect(try await store.latest(from: id["a"]!, to: id["me"]!, now: 100)?.id == "a2")
        // 48 h later everything is gone, and purge removes it.
        #expect(try await store.inbox(of: id["me"]!, now: 30 + InboxMessage.lifetime).isEmpty)
        #expect(try await store.purge(now: 40 + InboxMessage.lifetime) == 5)
    }

    @Test(arguments: Engine.allCases) func deliveryGoesPendingDeliveredDisplayed(_ engine: Engine) async throws {
        let (store, id) = try await store(["a", "me"], engine)
        try await store.insert(message("m", from: id["a"]!, to: id["me"]!, at: 10))
        #expect(try await store.message("m", now: 11)?.status == "pending")
        #expect(try await store.markDelivered(["m"], now: 12).count == 1)
        #expect(try await store.markDelivered(["m"], now: 13).isEmpty)
        #expect(try await store.message("m", now: 14)?.status == "delivered")
        #expect(try await store.markDisplayed("m", by: id["a"]!, now: 15) == nil)
        #expect(try await store.markDisplayed("m", by: id["me"]!, now: 15)?.status == "displayed")
        // A report again (the board had no pong after it): nothing to tell; the first time stays.
        #expect(try await store.markDisplayed("m", by: id["me"]!, now: 16) == nil)
        #expect(try await store.message("m", now: 17)?.displayedAt == 15)
    }

    /// A send's recipient, by id or by name in any case: whether they block the sender and
    /// whether they are friends (PostgreSQL's in a function of the schema, version 7).
    @Test(arguments: Engine.allCases) func aRecipientIsFoundWithTheirBlockAndFriendship(_ engine: Engine) async throws {
        let (store, id) = try await store(["Sender", "Friend", "Blocker", "Stranger"], engine)
        try await store.befriend(id["Sender"]!, id["Friend"]!, now: 1)
        try await store.befriend(id["Sender"]!, id["Blocker"]!, now: 1)
        try await store.block(id["Blocker"]!, id["Sender"]!)
        func answer(_ name: String) async throws -> [String]? {
            try await store.recipient(name, of: id["Sender"]!).map { [$0.user.id, $0.user.username, "\($0.blocks)", "\($0.friends)"] }
        }
        #expect(try await answer("fRIEND") == [id["Friend"]!, "Friend", "false", "true"])
        #expect(try await answer(id["Friend"]!.uppercased()) == [id["Friend"]!, "Friend", "false", "true"])
        #expect(try await answer("blocker") == [id["Blocker"]!, "Blocker", "true", "false"])
        #expect(try await answer("stranger") == [id["Stranger"]!, "Stranger", "false", "false"])
        #expect(try await answer("nobody") == nil)
        #expect(try await answer("no one!") == nil)
    }

    /// The POST that sent a message and the socket it was shown on may both deliver it at once:
    /// exactly one of them gets to tell the sender. 450 ids are marked in three statements
    /// (`DeliveryMarks.batch`; PostgreSQL's function, one), an id that is none among them.
    @Test(arguments: Engine.allCases) func aMessageIsDeliveredOnceWhoeverDeliversIt(_ engine: Engine) async throws {
        let (store, id) = try await store(["a", "me"], engine)
        for i in 0..<450 { try await store.insert(message("m\(i)", from: id["a"]!, to: id["me"]!, at: 10)) }
        let ids = (0..<450).map { "m\($0)" }
        let counts = await withTaskGroup(of: Int.self) { group in
            for t in 0..<8 { group.addTask { (try? await store.markDelivered(ids + ["no id!"], now: 12 + Double(t)).count) ?? -1000 } }
            return await group.reduce(0, +)
        }
        #expect(counts == 450)
        for id in ids { #expect(try await store.message(id, now: 30)?.status == "delivered") }
    }

    /// Issue 18: text was bound up to its first NUL, so "wall\0evil" found wall and
    /// "<id>\0junk" marked <id> displayed. Every byte is bound now, and ids and names are
    /// checked as whole strings before any query.
    @Test(arguments: Engine.allCases) func aNULCutsNothing(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (wall, _) = try await store.addUser("wall", now: 1)
        let (alice, _) = try await store.addUser("alice", now: 1)
        try await store.insert(message("m1", from: alice.id, to: wall.id, at: 10))
        _ = try await store.markDelivered(["m1"], now: 11)
        #expect(try await store.user("wall\u{0}evil") == nil)
        #expect(try await store.user(named: "wall\u{0}evil") == nil)
        #expect(try await store.user(wall.id + "\u{0}x") == nil)
        #expect(try await store.message("m1\u{0}junk", now: 12) == nil)
        #expect(try await store.markDisplayed("m1\u{0}junk", by: wall.id, now: 12) == nil)
        #expect(try await store.message("m1", now: 13)?.status == "delivered")
        // The binding itself: a NUL is a byte like any other (SQLite), or refused as text (PostgreSQL).
        guard engine == .sqlite else {
            await #expect(throws: SQLFailure.self) { try await store.db.query("SELECT count(*) FROM users WHERE username = ?", [.text("wall\u{0}evil")]) }
            return
        }
        #expect(try await store.db.query("SELECT count(*) FROM users WHERE username = ?", [.text("wall\u{0}evil")]).first?.first?.int == 0)
        #expect(try await store.db.query("SELECT count(*) FROM users WHERE username = ?", [.text("wall")]).first?.first?.int == 1)
    }

    @Test(arguments: Engine.allCases) func usernamesAreChecked(_ engine: Engine) async throws {
        let store = try await engine.store()
        _ = try await store.addUser("alice", now: 1)
        await #expect(throws: HubError.self) { try await store.addUser("ALICE", now: 1) }
        await #expect(throws: HubError.self) { try await store.addUser("no spaces", now: 1) }
        await #expect(throws: HubError.self) { try await store.addUser("", now: 1) }
    }
}

@Suite struct MessageRulesTests {
    @Test func textMustBeOnTheCharacterSetAndAtMost132() {
        #expect(MessageRules.problem(content: "Good morning! {63}", type: .text) == nil)
        #expect(MessageRules.problem(content: String(repeating: "A", count: 132), type: .text) == nil)
        #expect(MessageRules.problem(content: String(repeating: "A", count: 133), type: .text)?.contains("133 characters") == true)
        #expect(MessageRules.problem(content: "hi 😀", type: .text)?.contains("'😀' at position 4") == true)
        #expect(MessageRules.problem(content: "  \n ", type: .text) == "content is empty")
        #expect(MessageRules.problem(content: "{99}", type: .text)?.contains("not a Vestaboard code") == true)
    }

    @Test func patternsAreAtMostTheBoard() {
        #expect(MessageRules.problem(content: "[[63,64]]", type: .pattern) == nil)
        #expect(MessageRules.problem(content: "[" + Array(repeating: "[1]", count: 7).joined(separator: ",") + "]", type: .pattern) != nil)
        #expect(MessageRules.problem(content: "hello", type: .pattern) != nil)
    }
}

@Suite struct SHA256Tests {
    @Test func knownDigests() {
        #expect(TokenHash.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(TokenHash.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(TokenHash.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(TokenHash.hex(String(repeating: "a", count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}

/// The schema's versions: a database made before a change is brought up to date at start, and
/// what it held stays readable; instances that start together migrate once.
@Suite struct HubMigrationTests {
    static let version1 = HubSchema.migrations.filter { $0.version == 1 }

    /// A new database of an engine, for a test to bring to an older version and open again.
    struct OldDatabase {
        let engine: Engine, name: String
        init(_ engine: Engine) async throws {
            self.engine = engine
            name = engine == .sqlite ? temporaryDatabase() : try await PostgresServer.sharedServer().newDatabase()
        }
        func open() async throws -> any SQLDatabase { engine == .sqlite ? try await SQLiteDatabase.open(path: name) : try engine.postgres(name) }
        func remove() { if engine == .sqlite { try? FileManager.default.removeItem(atPath: name) } }
    }

    @Test(arguments: Engine.allCases) func aVersionOneDatabaseGainsMessageOptionsAndKeepsItsMessages(_ engine: Engine) async throws {
        let old = try await OldDatabase(engine)
        defer { old.remove() }
        do {
            // The schema as version 1 wrote it (messages without options), with one message.
            let db = try await old.open()
            try await db.migrate(Self.version1)
            try await db.query("INSERT INTO users(id, username, token_hash, created_at) VALUES('a','alice','h1',1),('b','board','h2',1)")
            try await db.query("INSERT INTO messages(id, sender_id, recipient_id, content, content_type, created_at, expires_at) VALUES('00000000-0000-0000-0000-000000000001','a','b','OLD','text',10,1e12)")
            await #expect(throws: (any Error).self) { try await db.query("SELECT options FROM messages") }
        }
        let store = try await HubStore(try await old.open())
        #expect(try await store.message("00000000-0000-0000-0000-000000000001", now: 20)?.content == "OLD")
        var m = HubStore.Message(id: "00000000-0000-0000-0000-000000000002", senderID: "a", recipientID: "b", content: "NEW",
                                 contentType: .text, createdAt: 30, expiresAt: 1e12)
        m.options = MessageOptions(transition: TransitionFields(strategy: "column"), arriveAt: 40, duration: 60, forced: true)
        try await store.insert(m)
        let api = try await store.api(try #require(try await store.message(m.id, now: 31)))
        #expect(api.transition?.strategy == "column" && api.arriveAt == 40 && api.duration == 60 && api.forced == true)
        // A second start changes nothing.
        #expect(try await HubStore(try await old.open()).message(m.id, now: 31)?.options == m.options)
        if engine == .sqlite {
            #expect(try await store.db.query("PRAGMA user_version").first?.first?.int == Int64(HubSchema.migrations.count))
            // Version 6: a user found by id or by name (every send's recipient) through indexes, not
            // by reading every user.
            let plan = try await store.db.query("EXPLAIN QUERY PLAN SELECT id FROM users WHERE id = 'x' OR lower(username) = lower('Alice')")
                .compactMap { $0.last?.text }
            #expect(plan.contains { $0.contains("INDEX users_lower_username") } && !plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
        } else {
            #expect(try await store.db.query("SELECT version FROM flaphub_schema ORDER BY version").map { $0[0].int } == HubSchema.migrations.map { Int64($0.version) })
        }
    }

    /// Version 8 numbers the sends a database kept, by sender in the order they were made, and
    /// the hourly limit counts them across the upgrade; SQLite's check reads by the index.
    @Test(arguments: Engine.allCases) func sendsKeptBeforeVersion8AreNumberedAndStillCount(_ engine: Engine) async throws {
        let old = try await OldDatabase(engine)
        defer { old.remove() }
        do {
            let db = try await old.open()
            try await db.migrate(HubSchema.migrations.filter { $0.version <= 7 })
            try await db.query("INSERT INTO users(id, username, token_hash, created_at) VALUES('a','alice','h1',1),('b','bob','h2',1),('c','board','h3',1)")
            try await db.query("INSERT INTO sends(sender_id, at) VALUES('a', 200), ('b', 150), ('a', 100), ('a', 300)")
        }
        let store = try await HubStore(try await old.open())
        let numbered = try await store.db.query("SELECT sender_id, at, n FROM sends ORDER BY sender_id, n")
            .map { "\($0[0].text ?? "?") \($0[1].double ?? -1) \($0[2].int ?? -1)" }
        #expect(numbered == ["a 100.0 1", "a 200.0 2", "a 300.0 3", "b 150.0 1"])
        let m = { (id: String) in HubStore.Message(id: id, senderID: "a", recipientID: "c", content: "M", contentType: .text, createdAt: 400, expiresAt: 1e12) }
        // Three sends in the hour before 400: a limit of 3 refuses until the one at 100 leaves it.
        let refused = await #expect(throws: HubError.self) { try await store.send([m(HubStore.newMessageID(at: 400))], by: "a", now: 400, perHour: 3) }
        #expect(refused?.status == 429 && refused?.retryAfter == 3300, "\(String(describing: refused))")
        try await store.send([m(HubStore.newMessageID(at: 3701))], by: "a", now: 3701, perHour: 3)
        #expect(try await store.db.query("SELECT max(n) FROM sends WHERE sender_id = 'a'").first?.first?.int == 4)
        if engine == .sqlite {
            for check in ["SELECT max(n) FROM sends WHERE sender_id = 'a'", "SELECT at FROM sends WHERE sender_id = 'a' AND n = 2 AND at > 1"] {
                let plan = try await store.db.query("EXPLAIN QUERY PLAN " + check).compactMap { $0.last?.text }
                #expect(plan.contains { $0.contains("sends_by_sender_n") } && !plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
            }
        }
    }

    /// Four instances start at once on a new PostgreSQL database: each version runs once.
    @Test func instancesStartingTogetherMigrateOnce() async throws {
        let name = try await PostgresServer.sharedServer().newDatabase()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { _ = try await HubStore(try Engine.postgres.postgres(name)) } }
            try await group.waitForAll()
        }
        #expect(try PostgresServer.shared.psql("SELECT string_agg(version::text, ',' ORDER BY version) FROM flaphub_schema", database: name)
                == HubSchema.migrations.map { "\($0.version)" }.joined(separator: ","))
    }
}

/// The rate limit holds when many sends of one sender race (in PostgreSQL, from several
/// connections, as from several instances).
@Suite struct HubSendLimitTests {
    @Test(arguments: Engine.allCases) func racingSendsTakeExactlyTheLimit(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (a, _) = try await store.addUser("a", now: 0)
        let (b, _) = try await store.addUser("b", now: 0)
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<40 {
                group.addTask {
                    let m = HubStore.Message(id: UUID().uuidString.lowercased(), senderID: a.id, recipientID: b.id, content: "M\(i)",
                                             contentType: .text, createdAt: 100, expiresAt: 1e12)
                    do { try await store.send([m], by: a.id, now: 100, perHour: 10); return true } catch let e as HubError where e.status == 429 { return false }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 10)
        #expect(try await store.sends(by: a.id, now: 100).count == 10)
        #expect(try await store.db.query("SELECT count(*) FROM messages").first?.first?.int == 10)
    }

    /// A send stores every field of each recipient's copy as given — PostgreSQL's in one
    /// statement (`flaphub_send`), SQLite's in a transaction: an unlock and options or none,
    /// contents with the characters an array's text form quotes.
    @Test(arguments: Engine.allCases) func aSendStoresEachCopyAsGiven(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (a, _) = try await store.addUser("a", now: 0)
        let (b, _) = try await store.addUser("b", now: 0)
        let (c, _) = try await store.addUser("c", now: 0)
        var one = HubStore.Message(id: UUID().uuidString.lowercased(), senderID: a.id, recipientID: b.id, content: #"{"a", NULL} \ ;$$"#,
                                   contentType: .text, createdAt: 100, unlockAt: 150, expiresAt: 5000)
        one.options = MessageOptions(transition: TransitionFields(strategy: "column"), arriveAt: 160, duration: 60, forced: true)
        let two = HubStore.Message(id: UUID().uuidString.lowercased(), senderID: a.id, recipientID: c.id, content: "[[1,2]]",
                                   contentType: .pattern, createdAt: 100, expiresAt: 6000)
        try await store.send([one, two], by: a.id, now: 100, perHour: 2)
        #expect(try await store.message(one.id, now: 101) == one)
        #expect(try await store.message(two.id, now: 101) == two)
        #expect(try await store.sends(by: a.id, now: 101) == [100])
        try await store.send([two].map { var m = $0; m.id = UUID().uuidString.lowercased(); return m }, by: a.id, now: 200, perHour: 2)
        let refused = await #expect(throws: HubError.self) { try await store.send([one], by: a.id, now: 300, perHour: 2) }
        #expect(refused?.status == 429 && refused?.retryAfter == 3400, "the send at 100 leaves the hour first: \(String(describing: refused))")
        #expect(try await store.db.query("SELECT count(*) FROM messages").first?.first?.int == 3)
    }

    /// On PostgreSQL a send's notifications go out with its commit, and a send the limit
    /// refuses sends none.
    @Test func aSendOnPostgreSQLNotifiesAsItCommits() async throws {
        let store = try await Engine.postgres.store()
        let db = try #require(store.db as? PostgresDatabase)
        let (a, _) = try await store.addUser("a", now: 0)
        let (b, _) = try await store.addUser("b", now: 0)
        let heard = Mutex<[String]>([])
        let listening = AsyncStream<Void>.makeStream()
        let listener = Task {
            try await db.listen("test_sends", started: { listening.continuation.yield() }, receive: { p in heard.withLock { $0.append(p) } })
        }
        defer { listener.cancel() }
        for await _ in listening.stream { break }
        let m = { (i: Int) in HubStore.Message(id: UUID().uuidString.lowercased(), senderID: a.id, recipientID: b.id, content: "M\(i)",
                                               contentType: .text, createdAt: 100, expiresAt: 1e12) }
        try await store.send([m(1)], by: a.id, now: 100, perHour: 1, notifying: ("test_sends", ["one", "two"]))
        await #expect(throws: HubError.self) { try await store.send([m(2)], by: a.id, now: 101, perHour: 1, notifying: ("test_sends", ["refused"])) }
        try await store.send([m(3)], by: b.id, now: 102, perHour: 1, notifying: ("test_sends", ["three"]))
        // Several events in one statement (a batch of deliveries), in order, as given — an
        // array's quoting characters too; none for none.
        try await db.notify("test_sends", ["four", #"{"a", NULL} \ ,"#, "six"])
        try await db.notify("test_sends", [])
        #expect(await eventually { heard.withLock { $0.count } >= 6 })
        #expect(heard.withLock { $0 } == ["one", "two", "three", "four", #"{"a", NULL} \ ,"#, "six"])
    }

    @Test func aMigrationSplitsAtSemicolonsOutsideDollarQuotes() {
        let script = "CREATE TABLE t(a INT);\nCREATE FUNCTION f() RETURNS INT LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;\n  ;"
        #expect(Migration.statements(script) == ["CREATE TABLE t(a INT)", "CREATE FUNCTION f() RETURNS INT LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$"])
        #expect(Migration.statements("") == [])
    }

    @Test(arguments: Engine.allCases) func usernamesAreOneWhateverTheirCase(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (bob, _) = try await store.addUser("Bob", now: 0)
        _ = try await store.addUser("alice", now: 0)
        _ = try await store.addUser("carol_1", now: 0)
        #expect(try await store.user("BOB")?.id == bob.id)
        #expect(try await store.user(named: "bob")?.id == bob.id)
        #expect(try await store.allUsers().map(\.username) == ["alice", "Bob", "carol_1"])
    }
}

/// On PostgreSQL, a send to recipients as this instance knew them is checked in the statement
/// that stores it: stored when each is still as known; else nothing is, and each one's status.
@Suite struct KnownRecipientSendTests {
    @Test func aSendToKnownRecipientsIsCheckedAsItIsStored() async throws {
        let store = try await Engine.postgres.store()
        let db = try #require(store.db as? PostgresDatabase)
        let (a, _) = try await store.addUser("a", now: 0)
        let (b, _) = try await store.addUser("b", now: 0)
        let (c, _) = try await store.addUser("c", now: 0)
        try await store.befriend(a.id, b.id, now: 0)
        try await store.befriend(a.id, c.id, now: 0)
        func m(_ to: String, _ i: Int) -> HubStore.Message {
            HubStore.Message(id: HubStore.newMessageID(at: 100), senderID: a.id, recipientID: to, content: "M\(i)", contentType: .text,
                             createdAt: 100, expiresAt: 1e12)
        }
        func send(_ messages: [HubStore.Message], _ transitions: [HubStore.BoardTransition?], perHour: Int = 10) async throws -> [Int]? {
            try await store.sendKnown(messages, transitions: transitions, by: a.id, now: 100, perHour: perHour, notifying: nil, on: db)
        }
        func stored() async throws -> Int64? { try await store.db.query("SELECT count(*) FROM messages").first?.first?.int }
        #expect(try await send([m(b.id, 1), m(c.id, 2)], [nil, nil]) == nil)
        #expect(try await stored() == 2)
        try await store.setTransition("wave", speed: "fast", of: c.id)
        #expect(try await send([m(b.id, 3), m(c.id, 4)], [nil, nil]) == [0, 4], "c's board has a transition now: nothing stored")
        #expect(try await send([m(c.id, 5)], [.init(transition: "wave", speed: "slow")]) == [4])
        #expect(try await stored() == 2)
        #expect(try await send([m(c.id, 6)], [.init(transition: "wave", speed: "fast")]) == nil)
        try await store.block(b.id, a.id)
        #expect(try await send([m(b.id, 7)], [nil]) == [2])
        try await store.unfriend(a.id, c.id)
        #expect(try await send([m(c.id, 8)], [.init(transition: "wave", speed: "fast")]) == [3])
        #expect(try await send([m("no-such-id", 9)], [nil]) == [1])
        #expect(try await stored() == 3)
        try await store.befriend(a.id, c.id, now: 0)
        let refused = await #expect(throws: HubError.self) { _ = try await send([m(c.id, 10)], [.init(transition: "wave", speed: "fast")], perHour: 2) }
        #expect(refused?.status == 429)
        #expect(try await stored() == 3)
    }
}
