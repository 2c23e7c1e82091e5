import FlapCore
import FlapMessages
import Foundation

/// What the sender's page needs beyond the message API: how each board shows senders, one-time
/// sign-in links and the sessions they open, and a sender's own messages.
extension HubStore {
    /// How long a sign-in link and a session last, by default.
    public static let linkSeconds = 15.0 * 60, sessionSeconds = 30.0 * 86400

    /// Keeps what a board said of its face (the newest wins).
    public func setFace(_ face: BoardFace, of user: String, now: Double) async throws {
        let text = String(decoding: try JSONEncoder().encode(face), as: UTF8.self)
        try await db.query("""
            INSERT INTO board_faces(user_id, face, reported_at) VALUES(?,?,?)
            ON CONFLICT(user_id) DO UPDATE SET face = excluded.face, reported_at = excluded.reported_at
            """, [.text(user), .text(text), .double(now)])
    }

    /// What a board last said of its face, or nil when it never has.
    public func face(of user: String) async throws -> BoardFace? {
        guard let text = try await db.query("SELECT face FROM board_faces WHERE user_id = ?", [.text(user)]).first?.first?.text else { return nil }
        return try? JSONDecoder().decode(BoardFace.self, from: Data(text.utf8))
    }

    /// A new one-time sign-in code for a user (kept only as a hash; good for `seconds`).
    public func newSignInLink(for user: String, now: Double, seconds: Double = linkSeconds) async throws -> String {
        let code = String(Self.newToken().dropFirst(3))
        try await db.query("INSERT INTO sign_in_links(code_hash, user_id, expires_at) VALUES(?,?,?)",
                           [.text(TokenHash.hex(code)), .text(user), .double(now + seconds)])
        return code
    }

    /// Uses a sign-in code — once: a second use, from any instance, finds nothing — and opens a
    /// session; nil for a code unknown, used or expired.
    public func signIn(code: String, now: Double, seconds: Double = sessionSeconds) async throws -> (User, token: String)? {
        let rows = try await db.query("DELETE FROM sign_in_links WHERE code_hash = ? RETURNING user_id, expires_at", [.text(TokenHash.hex(code))])
        guard let row = rows.first, let id = row[0].text, (row[1].double ?? 0) > now,
              let user = try await users("WHERE id = ?", [.text(id)]).first else { return nil }
        let token = Self.newToken()
        try await db.query("INSERT INTO sessions(token_hash, user_id, created_at, expires_at) VALUES(?,?,?,?)",
                           [.text(TokenHash.hex(token)), .text(id), .double(now), .double(now + seconds)])
        return (user, token)
    }

    /// Ends the session of this token (a user's own token is not a session and stays).
    public func signOut(token: String) async throws {
        try await db.query("DELETE FROM sessions WHERE token_hash = ?", [.text(TokenHash.hex(token))])
    }

    /// A sender's messages not yet expired, newest first, at most `limit`, each with its
    /// recipient's username ("?" for a user gone), in one statement.
    public func sent(by sender: String, now: Double, limit: Int = 100) async throws -> [(message: Message, recipient: String)] {
        let columns = Self.columns.split(separator: ", ").map { "m." + $0 }.joined(separator: ", ")
        return try await db.query("""
            SELECT \(columns), u.username FROM messages m LEFT JOIN users u ON u.id = m.recipient_id
            WHERE m.sender_id = ? AND m.expires_at > ? ORDER BY m.created_at DESC, m.id LIMIT ?
            """, [.text(sender), .double(now), .int(Int64(limit))]).map { (try Self.message($0), $0.last?.text ?? "?") }
    }
}
