import FlapCore
import FlapMessages
import Foundation
import Testing
@testable import FlapHub

/// What the sender's page keeps, on both engines: one-time sign-in links (once, even when two
/// requests race; never after they expire), the sessions they open, boards' faces, a sender's list.
@Suite struct SenderPageStoreTests {
    @Test(arguments: Engine.allCases) func aSignInLinkWorksOnceAndItsSessionUntilItEnds(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (alice, own) = try await store.addUser("alice", now: 1)
        let code = try await store.newSignInLink(for: alice.id, now: 100, seconds: 60)
        // Eight redemptions at once: exactly one opens a session.
        let opened = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<8 { group.addTask { try await store.signIn(code: code, now: 110, seconds: 1000)?.token } }
            return try await group.reduce(into: [String]()) { if let t = $1 { $0.append(t) } }
        }
        #expect(opened.count == 1)
        let session = try #require(opened.first)
        #expect(session != own && session.hasPrefix("fh_"))
        #expect(try await store.user(token: session, now: 200) == alice)
        #expect(try await store.user(token: session, now: 1110) == nil, "a session ends at its time")
        #expect(try await store.user(token: own, now: 1110) == alice, "the user's own token does not")
        try await store.signOut(token: session)
        #expect(try await store.user(token: session, now: 200) == nil)
        try await store.signOut(token: own)
        #expect(try await store.user(token: own, now: 200) == alice, "signing out never ends the own token")

        let late = try await store.newSignInLink(for: alice.id, now: 100, seconds: 60)
        #expect(try await store.signIn(code: late, now: 161) == nil, "an expired link")
        #expect(try await store.signIn(code: "not-a-code", now: 110) == nil)
        // The purge takes expired links and sessions.
        _ = try await store.newSignInLink(for: alice.id, now: 100, seconds: 60)
        #expect(try await store.purge(now: 10_000) == 0)
        #expect(try await store.db.query("SELECT count(*) FROM sign_in_links").first?.first?.int == 0)
    }

    /// Issue 37, item 2: a user's own token is read from the database once (a send's first
    /// statement saved); a session's every time, so that one ended elsewhere (another instance's
    /// sign-out, a row deleted) ends here at once. Each is shown by a row deleted by hand: the
    /// user of an own token already read is still known; a session's is not.
    @Test(arguments: Engine.allCases) func anOwnTokenIsReadOnceASessionEveryTime(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (alice, own) = try await store.addUser("alice", now: 1)
        let code = try await store.newSignInLink(for: alice.id, now: 100, seconds: 60)
        let session = try #require(try await store.signIn(code: code, now: 110, seconds: 1000)?.token)
        #expect(try await store.user(token: own, now: 200) == alice)
        #expect(try await store.user(token: session, now: 200) == alice)
        #expect(store.ownTokens.value(TokenHash.hex(own)) == alice && store.ownTokens.value(TokenHash.hex(session)) == nil,
                "the own token kept, the session not")
        try await store.db.query("DELETE FROM sessions")
        try await store.db.query("DELETE FROM users")
        #expect(try await store.user(token: session, now: 200) == nil, "a session is read every time")
        #expect(try await store.user(token: own, now: 200) == alice, "an own token once")
        #expect(try await store.user(token: "fh_unknown", now: 200) == nil)
    }

    @Test func theOwnTokensKeptAreBounded() {
        let kept = OwnTokens(capacity: 2)
        let users = (0..<3).map { HubStore.User(id: "u\($0)", username: "user\($0)") }
        for (i, u) in users.enumerated() { kept.keep("h\(i)", u) }
        #expect(kept.value("h2") == users[2], "the newest is kept")
        #expect(kept.value("h0") == nil && kept.value("h1") == nil, "past the capacity it started again")
    }

    @Test(arguments: Engine.allCases) func aBoardsFaceIsKeptAndTheNewestWins(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (board, _) = try await store.addUser("board", now: 1)
        #expect(try await store.face(of: board.id) == nil)
        try await store.setFace(.assumed, of: board.id, now: 2)
        #expect(try await store.face(of: board.id) == .assumed)
        let small = BoardFace(zones: [Zone(rows: 0..<3, cols: 0..<15, senders: .listed(["alice"]), nameLine: true)],
                              mapper: { _ in GlyphMapper(drum: .standard) })
        try await store.setFace(small, of: board.id, now: 3)
        #expect(try await store.face(of: board.id) == small)
    }

    @Test(arguments: Engine.allCases) func aSendersListIsTheirsNewestFirst(_ engine: Engine) async throws {
        let store = try await engine.store()
        let (a, _) = try await store.addUser("alice", now: 1)
        let (b, _) = try await store.addUser("bob", now: 1)
        for (i, (from, t)) in [(a, 10.0), (b, 11), (a, 12), (a, 13)].enumerated() {
            try await store.insert(HubStore.Message(id: "m\(i)", senderID: from.id, recipientID: from.id == a.id ? b.id : a.id, content: "m\(i)",
                                                    contentType: .text, createdAt: t, unlockAt: nil, expiresAt: t + 100))
        }
        let sent = try await store.sent(by: a.id, now: 20)
        #expect(sent.map(\.message.id) == ["m3", "m2", "m0"] && sent.map(\.recipient) == ["bob", "bob", "bob"])
        #expect(try await store.sent(by: b.id, now: 20).map(\.recipient) == ["alice"])
        #expect(try await store.sent(by: a.id, now: 20, limit: 2).map(\.message.id) == ["m3", "m2"])
        #expect(try await store.sent(by: a.id, now: 111).map(\.message.id) == ["m3", "m2"], "expired ones are gone")
    }
}
