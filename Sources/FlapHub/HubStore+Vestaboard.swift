import FlapHubInput
import FlapMessages
import Foundation

/// What Vestaboard's Cloud and Read/Write APIs need of the store: the tokens a board's owner
/// makes (kept only as hashes, each reading and/or writing one board), what each board last said
/// it shows, and the transition its owner set.
extension HubStore {
    /// A Cloud API token of a board, as listed (the token itself is shown once, when made).
    public struct VestaboardToken: Sendable, Equatable {
        public var id: String
        public var userID: String
        public var canRead: Bool
        public var canWrite: Bool
        public var createdAt: Double
    }

    /// At most this many tokens a board.
    public static let maxVestaboardTokens = 32

    /// Makes a token for `user` (a board's account) and returns it with the token (shown once).
    public func addVestaboardToken(for user: String, read: Bool, write: Bool, now: Double) async throws -> (VestaboardToken, token: String) {
        guard read || write else { throw HubError(400, "a token reads, writes or both") }
        let count = try await db.query("SELECT count(*) FROM vestaboard_tokens WHERE user_id = ?", [.text(user)]).first?[0].int ?? 0
        guard count < Self.maxVestaboardTokens else { throw HubError(409, "a board has at most \(Self.maxVestaboardTokens) tokens; revoke one first") }
        let token = "vb_" + Self.newToken().dropFirst(3)
        let made = VestaboardToken(id: String(UUID().uuidString.lowercased().prefix(8)), userID: user, canRead: read, canWrite: write, createdAt: now)
        try await db.query("INSERT INTO vestaboard_tokens(id, token_hash, user_id, can_read, can_write, created_at) VALUES(?,?,?,?,?,?)",
                           [.text(made.id), .text(TokenHash.hex(token)), .text(user), .int(read ? 1 : 0), .int(write ? 1 : 0), .double(now)])
        return (made, token)
    }

    /// The tokens of a board, oldest first.
    public func vestaboardTokens(of user: String) async throws -> [VestaboardToken] {
        try await vestaboardTokens("WHERE user_id = ? ORDER BY created_at, id", [.text(user)])
    }

    /// The token a request carries, or nil when no token is that one.
    public func vestaboardToken(_ token: String) async throws -> VestaboardToken? {
        try await vestaboardTokens("WHERE token_hash = ?", [.text(TokenHash.hex(token))]).first
    }

    /// Revokes a token of a board by its id; false when the board has none of that id.
    public func revokeVestaboardToken(_ id: String, of user: String) async throws -> Bool {
        let had = try await vestaboardTokens("WHERE id = ? AND user_id = ?", [.text(id), .text(user)]).isEmpty == false
        if had { try await db.query("DELETE FROM vestaboard_tokens WHERE id = ? AND user_id = ?", [.text(id), .text(user)]) }
        return had
    }

    private func vestaboardTokens(_ clause: String, _ parameters: [SQLValue]) async throws -> [VestaboardToken] {
        try await db.query("SELECT id, user_id, can_read, can_write, created_at FROM vestaboard_tokens \(clause)", parameters).map {
            VestaboardToken(id: try $0.text(0), userID: try $0.text(1), canRead: $0[2].int == 1, canWrite: $0[3].int == 1,
                            createdAt: $0[4].double ?? 0)
        }
    }

    /// What a board shows, as it last said (`board.shows`): an id that changes with the layout.
    public struct BoardLayout: Sendable, Equatable {
        public var id: String
        public var layout: [[Int]]
        public var reportedAt: Double
    }

    /// Keeps what a board says it shows; the id changes only when the layout does.
    public func setLayout(_ layout: [[Int]], of user: String, now: Double) async throws {
        if let old = try await self.layout(of: user), old.layout == layout { return }
        let text = String(decoding: try JSONEncoder().encode(layout), as: UTF8.self)
        try await db.query("""
            INSERT INTO board_layouts(user_id, id, layout, reported_at) VALUES(?,?,?,?)
            ON CONFLICT(user_id) DO UPDATE SET id = excluded.id, layout = excluded.layout, reported_at = excluded.reported_at
            """, [.text(user), .text(UUID().uuidString.lowercased()), .text(text), .double(now)])
    }

    /// What a board last said it shows, or nil when it never has.
    public func layout(of user: String) async throws -> BoardLayout? {
        guard let row = try await db.query("SELECT id, layout, reported_at FROM board_layouts WHERE user_id = ?", [.text(user)]).first,
              let text = row[1].text, let layout = try? JSONDecoder().decode([[Int]].self, from: Data(text.utf8)) else { return nil }
        return BoardLayout(id: try row.text(0), layout: layout, reportedAt: row[2].double ?? 0)
    }

    /// The transition a board's owner set (Cloud API names), or nil: the board's own style.
    public func transition(of user: String) async throws -> BoardTransition? {
        guard let row = try await db.query("SELECT transition, speed FROM board_transitions WHERE user_id = ?", [.text(user)]).first else { return nil }
        return BoardTransition(transition: try row.text(0), speed: try row.text(1))
    }

    public func setTransition(_ transition: String, speed: String, of user: String) async throws {
        try await db.query("""
            INSERT INTO board_transitions(user_id, transition, speed) VALUES(?,?,?)
            ON CONFLICT(user_id) DO UPDATE SET transition = excluded.transition, speed = excluded.speed
            """, [.text(user), .text(transition), .text(speed)])
    }
}
