import FlapCore
import Foundation
import Testing
@testable import FlapHub

@Suite struct HubStoreTests {
    func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("hub-\(UUID().uuidString).db").path
    }

    func message(_ id: String, from: String, to: String, at t: Double, unlock: Double? = nil) -> HubStore.Message {
        HubStore.Message(id: id, senderID: from, recipientID: to, content: id, contentType: .text, createdAt: t,
                         unlockAt: unlock, expiresAt: t + InboxMessage.lifetime)
    }

    @Test func usersFriendsAndMessagesSurviveAReopen() throws {
        let path = temporaryDatabase()
        let (alice, token) = try HubStore(path: path).addUser("alice", now: 1)
        do {
            let store = try HubStore(path: path)
            let (bob, _) = try store.addUser("bob", now: 1)
            try store.befriend(alice.id, bob.id, now: 2)
            try store.insert(message("m1", from: alice.id, to: bob.id, at: 10))
        }
        let store = try HubStore(path: path)
        #expect(try store.user(token: token) == alice)
        #expect(try store.user(token: token + "x") == nil)
        let bob = try #require(try store.user("BOB"))
        #expect(try store.areFriends(bob.id, alice.id))
        #expect(try store.inbox(of: bob.id, now: 20).map(\.id) == ["m1"])
        // The token itself is nowhere in the file.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.range(of: Data(token.utf8)) == nil)
    }

    /// A store with these users, their ids by name.
    func store(_ names: [String]) throws -> (HubStore, [String: String]) {
        let store = try HubStore(path: temporaryDatabase())
        var ids: [String: String] = [:]
        for n in names { ids[n] = try store.addUser(n, now: 0).0.id }
        return (store, ids)
    }

    @Test func theInboxHasTheLatestOfEachSenderAndEveryHeldMessage() throws {
        let (store, id) = try store(["a", "b", "me", "other"])
        func message(_ m: String, from: String, to: String, at t: Double, unlock: Double? = nil) -> HubStore.Message {
            self.message(m, from: id[from]!, to: id[to]!, at: t, unlock: unlock)
        }
        try store.insert(message("a1", from: "a", to: "me", at: 10))
        try store.insert(message("a2", from: "a", to: "me", at: 20))
        try store.insert(message("a3", from: "a", to: "me", at: 30, unlock: 500))
        try store.insert(message("b1", from: "b", to: "me", at: 15))
        try store.insert(message("x", from: "a", to: "other", at: 40))
        #expect(try store.inbox(of: id["me"]!, now: 100).map(\.id) == ["b1", "a2", "a3"])
        #expect(try store.inbox(of: id["me"]!, now: 600).map(\.id) == ["b1", "a3"])
        #expect(try store.latest(from: id["a"]!, to: id["me"]!, now: 100)?.id == "a2")
        // 48 h later everything is gone, and purge removes it.
        #expect(try store.inbox(of: id["me"]!, now: 30 + InboxMessage.lifetime).isEmpty)
        #expect(try store.purge(now: 40 + InboxMessage.lifetime) == 5)
    }

    @Test func deliveryGoesPendingDeliveredDisplayed() throws {
        let (store, id) = try store(["a", "me"])
        try store.insert(message("m", from: id["a"]!, to: id["me"]!, at: 10))
        #expect(try store.message("m", now: 11)?.status == "pending")
        #expect(try store.markDelivered(["m"], now: 12).count == 1)
        #expect(try store.markDelivered(["m"], now: 13).isEmpty)
        #expect(try store.message("m", now: 14)?.status == "delivered")
        #expect(try store.markDisplayed("m", by: id["a"]!, now: 15) == nil)
        #expect(try store.markDisplayed("m", by: id["me"]!, now: 15)?.status == "displayed")
    }

    /// The POST that sent a message and the socket it was shown on may both deliver it at once:
    /// exactly one of them gets to tell the sender.
    @Test func aMessageIsDeliveredOnceWhoeverDeliversIt() async throws {
        let (store, id) = try store(["a", "me"])
        for i in 0..<50 { try store.insert(message("m\(i)", from: id["a"]!, to: id["me"]!, at: 10)) }
        let ids = (0..<50).map { "m\($0)" }
        let counts = await withTaskGroup(of: Int.self) { group in
            for t in 0..<8 { group.addTask { (try? store.markDelivered(ids, now: 12 + Double(t)).count) ?? -1000 } }
            return await group.reduce(0, +)
        }
        #expect(counts == 50)
        #expect(try ids.allSatisfy { try store.message($0, now: 30)?.status == "delivered" })
    }

    /// Issue 18: text was bound up to its first NUL, so "wall\0evil" found wall and
    /// "<id>\0junk" marked <id> displayed. Every byte is bound now, and ids and names are
    /// checked as whole strings before any query.
    @Test func aNULCutsNothing() throws {
        let store = try HubStore(path: temporaryDatabase())
        let (wall, _) = try store.addUser("wall", now: 1)
        let (alice, _) = try store.addUser("alice", now: 1)
        try store.insert(message("m1", from: alice.id, to: wall.id, at: 10))
        _ = try store.markDelivered(["m1"], now: 11)
        #expect(try store.user("wall\u{0}evil") == nil)
        #expect(try store.user(named: "wall\u{0}evil") == nil)
        #expect(try store.user(wall.id + "\u{0}x") == nil)
        #expect(try store.message("m1\u{0}junk", now: 12) == nil)
        #expect(try store.markDisplayed("m1\u{0}junk", by: wall.id, now: 12) == nil)
        #expect(try store.message("m1", now: 13)?.status == "delivered")
        // The binding itself: a NUL is a byte like any other.
        #expect(try store.db.query("SELECT count(*) FROM users WHERE username = ?", [.text("wall\u{0}evil")]).first?.first?.int == 0)
        #expect(try store.db.query("SELECT count(*) FROM users WHERE username = ?", [.text("wall")]).first?.first?.int == 1)
    }

    @Test func usernamesAreChecked() throws {
        let store = try HubStore(path: temporaryDatabase())
        _ = try store.addUser("alice", now: 1)
        #expect(throws: HubError.self) { try store.addUser("ALICE", now: 1) }
        #expect(throws: HubError.self) { try store.addUser("no spaces", now: 1) }
        #expect(throws: HubError.self) { try store.addUser("", now: 1) }
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

/// The schema's versions: a file made before a change is brought up to date at start, and what
/// it held stays readable.
@Suite struct HubMigrationTests {
    @Test func aVersionOneFileGainsMessageOptionsAndKeepsItsMessages() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hub-v1-\(UUID().uuidString).db").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            // The schema as version 1 wrote it (messages without options), with one message.
            let db = try SQLiteDatabase(path: path)
            try db.execute(HubStore.schema + "PRAGMA user_version = 1;")
            try db.query("INSERT INTO users(id, username, token_hash, created_at) VALUES('a','alice','h1',1),('b','board','h2',1)")
            try db.query("INSERT INTO messages(id, sender_id, recipient_id, content, content_type, created_at, expires_at) VALUES('00000000-0000-0000-0000-000000000001','a','b','OLD','text',10,1e12)")
            #expect(try db.query("SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'options'").first?.first?.int == 0)
        }
        let store = try HubStore(path: path)
        #expect(try store.db.query("PRAGMA user_version").first?.first?.int == 2)
        #expect(try store.message("00000000-0000-0000-0000-000000000001", now: 20)?.content == "OLD")
        var m = HubStore.Message(id: "00000000-0000-0000-0000-000000000002", senderID: "a", recipientID: "b", content: "NEW",
                                 contentType: .text, createdAt: 30, expiresAt: 1e12)
        m.options = MessageOptions(transition: TransitionFields(strategy: "column"), arriveAt: 40, duration: 60, forced: true)
        try store.insert(m)
        let api = try store.api(try #require(try store.message(m.id, now: 31)))
        #expect(api.transition?.strategy == "column" && api.arriveAt == 40 && api.duration == 60 && api.forced == true)
        // A second start changes nothing.
        #expect(try HubStore(path: path).message(m.id, now: 31)?.options == m.options)
    }
}
