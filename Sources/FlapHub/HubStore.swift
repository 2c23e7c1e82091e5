import FlapCore
import Foundation

/// Everything flaphub keeps, in one SQLite file: users (tokens stored as SHA-256 hashes),
/// friendships and requests, blocks, messages with their delivery to each recipient, and the
/// sends of the last hour (the rate limit). Times are seconds since 1970.
public final class HubStore: Sendable {
    public let db: SQLiteDatabase

    public init(path: String) throws {
        db = try SQLiteDatabase(path: path)
        try db.execute(Self.schema)
        try migrate()
    }

    /// The schema's versions after the first, in order: each runs once, at the start after an
    /// upgrade, in a transaction with the new `user_version`.
    static let migrations: [(version: Int64, sql: String)] = [
        (2, "ALTER TABLE messages ADD COLUMN options TEXT;"),  // transition, arriveAt, duration, forced (JSON)
    ]

    /// Brings the file to the newest schema (the tables above are version 1).
    func migrate() throws {
        let current = max(1, try db.query("PRAGMA user_version").first?.first?.int ?? 0)
        for m in Self.migrations where m.version > current {
            try db.execute("BEGIN; \(m.sql) PRAGMA user_version = \(m.version); COMMIT;")
        }
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS users(
            id TEXT PRIMARY KEY, username TEXT NOT NULL UNIQUE COLLATE NOCASE, display_name TEXT,
            token_hash TEXT NOT NULL UNIQUE, created_at REAL NOT NULL);
        CREATE TABLE IF NOT EXISTS friendships(
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            friend_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at REAL NOT NULL, PRIMARY KEY(user_id, friend_id));
        CREATE TABLE IF NOT EXISTS friend_requests(
            id TEXT PRIMARY KEY, from_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            to_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            status TEXT NOT NULL DEFAULT 'pending', created_at REAL NOT NULL, UNIQUE(from_id, to_id));
        CREATE TABLE IF NOT EXISTS blocks(
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            blocked_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, PRIMARY KEY(user_id, blocked_id));
        CREATE TABLE IF NOT EXISTS messages(
            id TEXT PRIMARY KEY, sender_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            recipient_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            content TEXT NOT NULL, content_type TEXT NOT NULL, created_at REAL NOT NULL, unlock_at REAL,
            expires_at REAL NOT NULL, delivered_at REAL, displayed_at REAL);
        CREATE INDEX IF NOT EXISTS messages_inbox ON messages(recipient_id, sender_id, created_at);
        CREATE TABLE IF NOT EXISTS sends(sender_id TEXT NOT NULL, at REAL NOT NULL);
        CREATE INDEX IF NOT EXISTS sends_by_sender ON sends(sender_id, at);
        """

    // MARK: users

    public struct User: Sendable, Equatable, Codable {
        public var id: String
        public var username: String
        public var displayName: String?
    }

    /// Creates a user and returns it with its bearer token (shown once, stored only as a hash).
    public func addUser(_ username: String, displayName: String? = nil, now: Double) throws -> (User, token: String) {
        guard Self.isUsername(username) else {
            throw HubError(400, "username '\(username)' must be 1–20 letters, digits, '_', '.' or '-'")
        }
        guard try user(named: username) == nil else { throw HubError(409, "username '\(username)' is taken") }
        let user = User(id: UUID().uuidString.lowercased(), username: username, displayName: displayName)
        let token = Self.newToken()
        try db.query("INSERT INTO users(id, username, display_name, token_hash, created_at) VALUES(?,?,?,?,?)",
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

    public func user(token: String) throws -> User? {
        try users("WHERE token_hash = ?", [.text(TokenHash.hex(token))]).first
    }

    public func user(named name: String) throws -> User? {
        guard Self.isUsername(name) else { return nil }
        return try users("WHERE username = ?", [.text(name)]).first
    }

    /// A user by id or username (nil for a string that is neither, exactly).
    public func user(_ idOrName: String) throws -> User? {
        guard Self.isID(idOrName) || Self.isUsername(idOrName) else { return nil }
        return try users("WHERE id = ? OR username = ?", [.text(idOrName.lowercased()), .text(idOrName)]).first
    }

    public func allUsers() throws -> [User] { try users("ORDER BY username", []) }

    private func users(_ clause: String, _ parameters: [SQLiteDatabase.Value]) throws -> [User] {
        try db.query("SELECT id, username, display_name FROM users \(clause)", parameters).map {
            User(id: $0[0].text!, username: $0[1].text!, displayName: $0[2].text)
        }
    }

    // MARK: friends

    public func befriend(_ a: String, _ b: String, now: Double) throws {
        guard a != b else { throw HubError(400, "a user cannot befriend themselves") }
        try db.transaction {
            for (x, y) in [(a, b), (b, a)] {
                try db.query("INSERT OR IGNORE INTO friendships(user_id, friend_id, created_at) VALUES(?,?,?)", [.text(x), .text(y), .double(now)])
            }
            try db.query("UPDATE friend_requests SET status = 'accepted' WHERE (from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?)",
                         [.text(a), .text(b), .text(b), .text(a)])
        }
    }

    public func areFriends(_ a: String, _ b: String) throws -> Bool {
        !(try db.query("SELECT 1 FROM friendships WHERE user_id = ? AND friend_id = ?", [.text(a), .text(b)])).isEmpty
    }

    public func friends(of id: String) throws -> [User] {
        try users("WHERE id IN (SELECT friend_id FROM friendships WHERE user_id = ?) ORDER BY username", [.text(id)])
    }

    public func unfriend(_ a: String, _ b: String) throws {
        try db.query("DELETE FROM friendships WHERE (user_id = ? AND friend_id = ?) OR (user_id = ? AND friend_id = ?)",
                     [.text(a), .text(b), .text(b), .text(a)])
    }

    public struct FriendRequest: Sendable, Codable, Equatable {
        public var id: String
        public var fromID: String
        public var toID: String
        public var status: String
    }

    public func request(from: String, to: String, now: Double) throws -> FriendRequest {
        guard from != to else { throw HubError(400, "a user cannot befriend themselves") }
        guard try !areFriends(from, to) else { throw HubError(409, "already friends") }
        if let r = try requests("WHERE from_id = ? AND to_id = ?", [.text(from), .text(to)]).first { return r }
        let r = FriendRequest(id: UUID().uuidString.lowercased(), fromID: from, toID: to, status: "pending")
        try db.query("INSERT INTO friend_requests(id, from_id, to_id, status, created_at) VALUES(?,?,?,?,?)",
                     [.text(r.id), .text(from), .text(to), .text("pending"), .double(now)])
        return r
    }

    public func pendingRequests(to id: String) throws -> [FriendRequest] {
        try requests("WHERE to_id = ? AND status = 'pending'", [.text(id)])
    }

    public func friendRequest(_ id: String) throws -> FriendRequest? {
        guard Self.isID(id) else { return nil }
        return try requests("WHERE id = ?", [.text(id.lowercased())]).first
    }

    public func decline(_ id: String) throws {
        try db.query("UPDATE friend_requests SET status = 'declined' WHERE id = ?", [.text(id)])
    }

    private func requests(_ clause: String, _ p: [SQLiteDatabase.Value]) throws -> [FriendRequest] {
        try db.query("SELECT id, from_id, to_id, status FROM friend_requests \(clause)", p).map {
            FriendRequest(id: $0[0].text!, fromID: $0[1].text!, toID: $0[2].text!, status: $0[3].text!)
        }
    }

    /// `user` blocks `blocked`: no messages from them, and the friendship ends.
    public func block(_ user: String, _ blocked: String) throws {
        try db.query("INSERT OR IGNORE INTO blocks(user_id, blocked_id) VALUES(?,?)", [.text(user), .text(blocked)])
        try unfriend(user, blocked)
    }

    public func blocks(_ user: String, _ other: String) throws -> Bool {
        !(try db.query("SELECT 1 FROM blocks WHERE user_id = ? AND blocked_id = ?", [.text(user), .text(other)])).isEmpty
    }
}

/// An error with the HTTP status it answers.
public struct HubError: Error, CustomStringConvertible {
    public let status: Int
    public let description: String
    public var retryAfter: Int?
    public init(_ status: Int, _ description: String, retryAfter: Int? = nil) {
        self.status = status
        self.description = description
        self.retryAfter = retryAfter
    }
}
