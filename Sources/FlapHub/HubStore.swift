import FlapCore
import FlapHubInput
import Foundation

/// Everything flaphub keeps, in SQLite or PostgreSQL (`HubSchema`, the same in both): users (tokens stored as SHA-256 hashes),
/// friendships and requests, blocks, messages with their delivery to each recipient, and the
/// sends of the last hour (the rate limit). Times are seconds since 1970.
public final class HubStore: Sendable {
    public let db: any SQLDatabase
    /// Users by the hash of their own token, as read (`user(token:)`): a send's first statement
    /// saved.
    let ownTokens = OwnTokens()
    /// On PostgreSQL, the recipients of earlier sends by the name given (`KnownRecipients`).
    let knownRecipients = KnownRecipients()
    /// On PostgreSQL, sends to known recipients in batches (`KnownSends`).
    let knownSends = KnownSends()

    /// A store in `db`, its schema brought to the newest version first.
    public init(_ db: any SQLDatabase) async throws {
        self.db = db
        try await db.migrate(HubSchema.migrations)
    }

    /// A store in a SQLite file.
    public convenience init(path: String) async throws {
        try await self.init(try await SQLiteDatabase.open(path: path))
    }

    // MARK: users

    public struct User: Sendable, Equatable, Codable {
        public var id: String
        public var username: String
        public var displayName: String?
    }

    /// Creates a user and returns it with its bearer token (shown once, stored only as a hash).
    public func addUser(_ username: String, displayName: String? = nil, now: Double) async throws -> (User, token: String) {
        guard Self.isUsername(username) else {
            throw HubError(400, "username '\(username)' must be 1–20 letters, digits, '_', '.' or '-'")
        }
        guard try await user(named: username) == nil else { throw HubError(409, "username '\(username)' is taken") }
        let user = User(id: UUID().uuidString.lowercased(), username: username, displayName: displayName)
        let token = Self.newToken()
        try await db.query("INSERT INTO users(id, username, display_name, token_hash, created_at) VALUES(?,?,?,?,?)",
                     [.text(user.id), .text(username), displayName.map { .text($0) } ?? .null, .text(TokenHash.hex(token)), .double(now)])
        return (user, token)
    }

    /// An id as an exact string: 1–64 ASCII letters, digits and '-' (the hub makes UUIDs), so
    /// nothing a client sends can match an id by a prefix, a NUL or a case folded elsewhere.
    public static func isID(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return (1...64).contains(u.count) && u.allSatisfy { c in
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x2D
        }
    }

    /// A username: 1–20 ASCII letters, digits, '_', '.' or '-'.
    public static func isUsername(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return (1...20).contains(u.count) && u.allSatisfy { c in
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x5F || c == 0x2E || c == 0x2D
        }
    }

    static func newToken() -> String {
        var g = SystemRandomNumberGenerator()
        return "fh_" + (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &g)) }.joined()
    }

    /// The user of a bearer token: their own token, or a session a sign-in link opened. A user's
    /// own token is read from the database once (it and the user never change: no route renames
    /// a user or changes a token) and then from `ownTokens`; a session's every time, since a
    /// session ends (sign-out, expiry, in any instance).
    public func user(token: String, now: Double = Date().timeIntervalSince1970) async throws -> User? {
        let hex = TokenHash.hex(token)
        if let known = ownTokens.value(hex) { return known }
        let hash = SQLValue.text(hex)
        let rows = try await db.query("""
            SELECT id, username, display_name, CASE WHEN token_hash = ? THEN 1 ELSE 0 END FROM users
            WHERE token_hash = ? OR id IN (SELECT user_id FROM sessions WHERE token_hash = ? AND expires_at > ?)
            """, [hash, hash, hash, .double(now)])
        let found = try rows.map { (user: try Self.user(row: $0), own: $0[3].int == 1) }
            .min { Self.byName($0.user, $1.user) }
        if let found, found.own { ownTokens.keep(hex, found.user) }
        return found?.user
    }

    public func user(named name: String) async throws -> User? {
        guard Self.isUsername(name) else { return nil }
        return try await users("WHERE lower(username) = lower(?)", [.text(name)]).first
    }

    /// A user by id or username (nil for a string that is neither, exactly).
    public func user(_ idOrName: String) async throws -> User? {
        guard Self.isID(idOrName) || Self.isUsername(idOrName) else { return nil }
        return try await users("WHERE id = ? OR lower(username) = lower(?)", [.text(idOrName.lowercased()), .text(idOrName)]).first
    }

    public func allUsers() async throws -> [User] { try await users("", []) }

    func users(_ clause: String, _ parameters: [SQLValue]) async throws -> [User] {
        try await db.query("SELECT id, username, display_name FROM users \(clause)", parameters).map(Self.user(row:)).sorted(by: Self.byName)
    }

    /// A user from a row that begins id, username, display name.
    static func user(row: [SQLValue]) throws -> User { User(id: try row.text(0), username: try row.text(1), displayName: row[2].text) }

    /// Users in order of name, whatever the engine's collation.
    static func byName(_ a: User, _ b: User) -> Bool { (a.username.lowercased(), a.id) < (b.username.lowercased(), b.id) }

    // MARK: friends

    public func befriend(_ a: String, _ b: String, now: Double) async throws {
        guard a != b else { throw HubError(400, "a user cannot befriend themselves") }
        try await db.transaction { db in
            for (x, y) in [(a, b), (b, a)] {
                try await db.query("INSERT INTO friendships(user_id, friend_id, created_at) VALUES(?,?,?) ON CONFLICT DO NOTHING", [.text(x), .text(y), .double(now)])
            }
            try await db.query("UPDATE friend_requests SET status = 'accepted' WHERE (from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?)",
                         [.text(a), .text(b), .text(b), .text(a)])
        }
    }

    public func areFriends(_ a: String, _ b: String) async throws -> Bool {
        !(try await db.query("SELECT 1 FROM friendships WHERE user_id = ? AND friend_id = ?", [.text(a), .text(b)])).isEmpty
    }

    public func friends(of id: String) async throws -> [User] {
        try await users("WHERE id IN (SELECT friend_id FROM friendships WHERE user_id = ?)", [.text(id)])
    }

    public func unfriend(_ a: String, _ b: String) async throws {
        try await db.query("DELETE FROM friendships WHERE (user_id = ? AND friend_id = ?) OR (user_id = ? AND friend_id = ?)",
                     [.text(a), .text(b), .text(b), .text(a)])
    }

    public struct FriendRequest: Sendable, Codable, Equatable {
        public var id: String
        public var fromID: String
        public var toID: String
        public var status: String
    }

    public func request(from: String, to: String, now: Double) async throws -> FriendRequest {
        guard from != to else { throw HubError(400, "a user cannot befriend themselves") }
        guard try await !areFriends(from, to) else { throw HubError(409, "already friends") }
        if let r = try await requests("WHERE from_id = ? AND to_id = ?", [.text(from), .text(to)]).first { return r }
        let r = FriendRequest(id: UUID().uuidString.lowercased(), fromID: from, toID: to, status: "pending")
        try await db.query("INSERT INTO friend_requests(id, from_id, to_id, status, created_at) VALUES(?,?,?,?,?)",
                     [.text(r.id), .text(from), .text(to), .text("pending"), .double(now)])
        return r
    }

    public func pendingRequests(to id: String) async throws -> [FriendRequest] {
        try await requests("WHERE to_id = ? AND status = 'pending'", [.text(id)])
    }

    public func friendRequest(_ id: String) async throws -> FriendRequest? {
        guard Self.isID(id) else { return nil }
        return try await requests("WHERE id = ?", [.text(id.lowercased())]).first
    }

    public func decline(_ id: String) async throws {
        try await db.query("UPDATE friend_requests SET status = 'declined' WHERE id = ?", [.text(id)])
    }

    private func requests(_ clause: String, _ p: [SQLValue]) async throws -> [FriendRequest] {
        try await db.query("SELECT id, from_id, to_id, status FROM friend_requests \(clause)", p).map {
            FriendRequest(id: try $0.text(0), fromID: try $0.text(1), toID: try $0.text(2), status: try $0.text(3))
        }
    }

    /// `user` blocks `blocked`: no messages from them, and the friendship ends.
    public func block(_ user: String, _ blocked: String) async throws {
        try await db.query("INSERT INTO blocks(user_id, blocked_id) VALUES(?,?) ON CONFLICT DO NOTHING", [.text(user), .text(blocked)])
        try await unfriend(user, blocked)
    }

    /// The transition a board's owner set through the Cloud API (its names: `transition`, `speed`).
    public struct BoardTransition: Sendable, Equatable {
        public var transition: String
        public var speed: String
    }

    /// A recipient of `sender`'s message, by id or username: whether they block the sender,
    /// whether they are friends, and the transition their board's owner set (Cloud API) — one
    /// statement (a send asks it for every recipient).
    public struct Recipient: Sendable {
        public var user: User
        public var blocks: Bool
        public var friends: Bool
        public var transition: BoardTransition?
    }

    /// On PostgreSQL, a recipient who can take the sender's messages is kept (`KnownRecipients`).
    public func recipient(_ idOrName: String, of sender: String) async throws -> Recipient? {
        let found = try await Self.recipient(idOrName, of: sender, in: db)
        if db is PostgresDatabase, let found, found.friends, !found.blocks {
            knownRecipients.keep(idOrName.lowercased(), found)
        }
        return found
    }

    /// `recipient(_:of:)` read on `db` (a database, or a transaction's connection).
    static func recipient(_ idOrName: String, of sender: String, in db: any SQLQuerying) async throws -> Recipient? {
        guard Self.isID(idOrName) || Self.isUsername(idOrName) else { return nil }
        let parameters: [SQLValue] = [.text(sender), .text(idOrName.lowercased()), .text(idOrName)]
        // PostgreSQL: the same statement in a function of the schema (HubSchema.v7), planned once.
        let rows = db is PostgresDatabase
            ? try await db.query("SELECT * FROM flaphub_recipient(?, ?, ?)", parameters)
            : try await db.query("""
            SELECT u.id, u.username, u.display_name,
                   CASE WHEN EXISTS(SELECT 1 FROM blocks WHERE user_id = u.id AND blocked_id = ?) THEN 1 ELSE 0 END,
                   CASE WHEN EXISTS(SELECT 1 FROM friendships WHERE user_id = ? AND friend_id = u.id) THEN 1 ELSE 0 END,
                   t.transition, t.speed
            FROM users u LEFT JOIN board_transitions t ON t.user_id = u.id
            WHERE u.id = ? OR lower(u.username) = lower(?)
            """, [parameters[0]] + parameters)
        return try rows.map { r in
            Recipient(user: User(id: try r.text(0), username: try r.text(1), displayName: r[2].text), blocks: r[3].int == 1, friends: r[4].int == 1,
                      transition: r[5].text.flatMap { transition in r[6].text.map { BoardTransition(transition: transition, speed: $0) } })
        }.min { Self.byName($0.user, $1.user) }
    }

    public func blocks(_ user: String, _ other: String) async throws -> Bool {
        !(try await db.query("SELECT 1 FROM blocks WHERE user_id = ? AND blocked_id = ?", [.text(user), .text(other)])).isEmpty
    }
}
