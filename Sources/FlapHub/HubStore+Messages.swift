import FlapCore
import FlapHubInput
import FlapMessages
import Foundation
import PostgresNIO

extension HubStore {
    /// One message to one recipient, with its delivery.
    public struct Message: Sendable, Equatable {
        public var id: String
        public var senderID: String
        public var recipientID: String
        public var content: String
        public var contentType: InboxMessage.ContentType
        public var createdAt: Double
        public var unlockAt: Double?
        public var expiresAt: Double
        public var deliveredAt: Double?
        public var displayedAt: Double?
        /// How the board is to show it (a Flapboard extension of the message API).
        public var options = MessageOptions()

        /// pending, delivered or displayed.
        public var status: String { displayedAt != nil ? "displayed" : deliveredAt != nil ? "delivered" : "pending" }
        var visibleAt: Double { max(createdAt, unlockAt ?? createdAt) }
    }

    /// A new message's id: a UUID of version 7 (RFC 9562) — its first 48 bits `t` in
    /// milliseconds, 74 of the rest random — so messages stored one after another have ids that
    /// sort together: each is added at the end of the id's index, not on a page of its own
    /// (SQLite wrote one random page of that index for every message, and the WAL and its
    /// checkpoint each wrote it again).
    public static func newMessageID(at t: Double) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        var random = SystemRandomNumberGenerator()
        let ms = UInt64(max(0, min(t * 1000, Double(1 << 48 - 1))))
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: ms >> (40 - 8 * UInt64(i))) }
        var rest = (random.next() as UInt64, random.next() as UInt64)
        withUnsafeBytes(of: &rest) { for i in 6..<16 { bytes[i] = $0[i] } }
        bytes[6] = 0x70 | bytes[6] & 0x0F
        bytes[8] = 0x80 | bytes[8] & 0x3F
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { text.append(UInt8(ascii: "-")) }
            text.append(HexDigits.lowercase[Int(b >> 4)]); text.append(HexDigits.lowercase[Int(b & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static let columns = "id, sender_id, recipient_id, content, content_type, created_at, unlock_at, expires_at, delivered_at, displayed_at, options"

    public func insert(_ m: Message) async throws { try await Self.insert(m, into: db) }

    static func insert(_ m: Message, into db: any SQLQuerying) async throws {
        try await db.query("INSERT INTO messages(\(Self.columns)) VALUES(?,?,?,?,?,?,?,?,?,?,?)", [
            .text(m.id), .text(m.senderID), .text(m.recipientID), .text(m.content), .text(m.contentType.rawValue),
            .double(m.createdAt), m.unlockAt.map { .double($0) } ?? .null, .double(m.expiresAt), .null, .null,
            m.options.isEmpty ? .null : .text(m.options.json()),
        ])
    }

    /// The instants of this sender's sends in the hour before `now`, oldest first.
    public func sends(by sender: String, now: Double) async throws -> [Double] { try await Self.sends(by: sender, now: now, in: db) }

    static func sends(by sender: String, now: Double, in db: any SQLQuerying) async throws -> [Double] {
        try await db.query("SELECT at FROM sends WHERE sender_id = ? AND at > ? ORDER BY n", [.text(sender), .double(now - 3600)])
            .compactMap { $0[0].double }
    }

    /// Throws the 429 (with when to try again) when the sender has sent `perHour` in the hour
    /// before `now`; returns the number of the sender's latest send (0: none kept), whose next is
    /// one more. Each send of a sender is numbered (`sends.n`, schema version 8), so two rows are
    /// read by the index, however many sends there are and whatever the limit: the latest, and
    /// the `perHour`-th latest — the one whose hour ends first among the last `perHour` (at least
    /// 1: the config's bound). (It was the latter alone, found by stepping over the `perHour - 1`
    /// after it: every send of the hour, for a sender under a high limit.)
    static func checkLimit(of sender: String, now: Double, perHour: Int, in db: any SQLQuerying) async throws -> Int64 {
        let latest = try await db.query("SELECT max(n) FROM sends WHERE sender_id = ?", [.text(sender)]).first?.first?.int ?? 0
        guard latest >= Int64(perHour) else { return latest }
        let rows = try await db.query("SELECT at FROM sends WHERE sender_id = ? AND n = ? AND at > ?",
                                      [.text(sender), .int(latest - Int64(perHour) + 1), .double(now - 3600)])
        guard let at = rows.first?.first?.double else { return latest }
        throw limited(perHour, at: at, now: now)
    }

    /// The 429 of a sender whose send at `at` must leave the hour first.
    static func limited(_ perHour: Int, at: Double, now: Double) -> HubError {
        HubError(429, "at most \(perHour) messages an hour", retryAfter: max(1, Int((at + 3600 - now).rounded(.up))))
    }

    /// Stores one send of `messages` (one per recipient) unless the sender has sent `perHour`
    /// in the hour before `now`: then nothing is stored and the 429 says when to try again.
    /// Sends of one sender are counted one after another, in every instance on the database.
    /// On PostgreSQL, `notifying` payloads are sent on its channel as the send commits.
    public func send(_ messages: [Message], by sender: String, now: Double, perHour: Int,
                     notifying: (channel: String, payloads: [String])? = nil) async throws {
        if let postgres = db as? PostgresDatabase {
            // One statement: the schema's `flaphub_send` (HubSchema.v8) does what the transaction below does.
            let b = Self.sendBindings(messages, by: sender, now: now, perHour: perHour, notifying: notifying)
            let rows = try await postgres.query(PostgresQuery(unsafeSQL: "SELECT flaphub_send($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)", binds: b))
            if let at = rows.first?.first?.double { throw Self.limited(perHour, at: at, now: now) }
            return
        }
        try await db.transaction(lock: "sends:" + sender) { db in try await Self.store(messages, by: sender, now: now, perHour: perHour, in: db) }
    }

    /// `send`'s transaction on SQLite: the limit checked, the messages and the send stored.
    private static func store(_ messages: [Message], by sender: String, now: Double, perHour: Int, in db: any SQLQuerying) async throws {
        let latest = try await checkLimit(of: sender, now: now, perHour: perHour, in: db)
        for m in messages { try await insert(m, into: db) }
        try await db.query("INSERT INTO sends(sender_id, at, n) VALUES(?,?,?)", [.text(sender), .double(now), .int(latest + 1)])
    }

    /// On SQLite, a send whose recipients are read in its own transaction: each of `names` as
    /// `recipient(_:of:)` reads it, `choose` makes from them the send's answer and its messages,
    /// and those are stored as `send` stores them (nothing, and no send counted, when it makes
    /// none). On the writer's connection, whose pages stay in its cache: a reader's are read again
    /// from the file after every commit — on a busy hub, each send's recipient from the disk cache
    /// (issue 37). And the recipients are as they were when the messages were stored.
    func send<Answer: Sendable>(reading names: [String], by sender: String, now: Double, perHour: Int,
                                choose: @escaping @Sendable ([Recipient?]) -> (Answer, [Message])) async throws -> Answer {
        try await db.transaction(lock: "sends:" + sender) { db in
            var recipients: [Recipient?] = []
            for name in names { recipients.append(try await Self.recipient(name, of: sender, in: db)) }
            let (answer, messages) = choose(recipients)
            if !messages.isEmpty { try await Self.store(messages, by: sender, now: now, perHour: perHour, in: db) }
            return answer
        }
    }

    /// `flaphub_send`'s arguments.
    private static func sendBindings(_ messages: [Message], by sender: String, now: Double, perHour: Int,
                                     notifying: (channel: String, payloads: [String])?) -> PostgresBindings {
        var b = PostgresBindings(capacity: 13)
        b.append(sender); b.append(now); b.append(Int32(clamping: perHour))
        appendMessages(messages, to: &b)
        b.append(notifying?.channel ?? ""); b.append(notifying?.payloads ?? [])
        return b
    }

    /// The message arrays of `flaphub_send` and `flaphub_send_known_batch`: an entry a message in
    /// each; an unlock of NaN and options of '' are NULL.
    static func appendMessages(_ messages: [Message], to b: inout PostgresBindings) {
        b.append(messages.map(\.id)); b.append(messages.map(\.recipientID)); b.append(messages.map(\.content))
        b.append(messages.map(\.contentType.rawValue)); b.append(messages.map(\.createdAt))
        b.append(messages.map { $0.unlockAt ?? .nan }); b.append(messages.map(\.expiresAt))
        b.append(messages.map { $0.options.isEmpty ? "" : $0.options.json() })
    }

    /// On PostgreSQL, `send` to recipients as this instance knew them (`KnownRecipients`), each
    /// message's recipient with the board transition it was made with: stored as `send` stores
    /// it when every recipient is still as known (nil), else nothing is, and each recipient's
    /// status is returned — 0 as known, 1 no such user, 2 blocks the sender, 3 not a friend, 4
    /// another transition (`flaphub_send_known`, HubSchema.v9). In a batch with the sends asked
    /// while the one before was stored (`KnownSends`): a round trip and a commit for all of them.
    func sendKnown(_ messages: [Message], transitions: [BoardTransition?], by sender: String, now: Double,
                   perHour: Int, notifying: (channel: String, payloads: [String])?, on postgres: PostgresDatabase) async throws -> [Int]? {
        let answer = try await knownSends.store(KnownSend(messages, transitions: transitions, by: sender, now: now, perHour: perHour,
                                                          notifying: notifying), on: postgres)
        if let at = answer.fullAt { throw Self.limited(perHour, at: at, now: now) }
        return answer.statuses.allSatisfy { $0 == 0 } ? nil : answer.statuses
    }

    /// What a recipient's board needs: of each sender, the latest message visible now and
    /// every message held for later.
    public func inbox(of recipient: String, now: Double) async throws -> [Message] {
        let all = try await messages("WHERE recipient_id = ? AND expires_at > ? ORDER BY created_at", [.text(recipient), .double(now)])
        var latest: [String: Message] = [:]
        var held: [Message] = []
        for m in all {
            if m.visibleAt > now { held.append(m); continue }
            if let l = latest[m.senderID], l.visibleAt > m.visibleAt { continue }
            latest[m.senderID] = m
        }
        return (latest.values + held).sorted { ($0.visibleAt, $0.id) < ($1.visibleAt, $1.id) }
    }

    /// The latest message visible now from one sender to one recipient.
    public func latest(from sender: String, to recipient: String, now: Double) async throws -> Message? {
        try await inbox(of: recipient, now: now).last { $0.senderID == sender && $0.visibleAt <= now }
    }

    public func message(_ id: String, now: Double) async throws -> Message? {
        guard Self.isID(id) else { return nil }
        return try await messages("WHERE id = ? AND expires_at > ?", [.text(id.lowercased()), .double(now)]).first
    }

    public func delete(message id: String) async throws {
        try await db.query("DELETE FROM messages WHERE id = ?", [.text(id)])
    }

    /// Marks messages delivered; returns those that were not yet (each exactly once, however
    /// many requests and sockets deliver it at the same time).
    /// One statement for every `DeliveryMarks.batch` ids (on PostgreSQL, one for all).
    public func markDelivered(_ ids: [String], now: Double) async throws -> [Message] {
        let valid = ids.filter(Self.isID).map { $0.lowercased() }
        guard !valid.isEmpty else { return [] }
        if let postgres = db as? PostgresDatabase {
            // One statement whatever the count, in a function of the schema (HubSchema.v7), planned once.
            var b = PostgresBindings(capacity: 2)
            b.append(valid); b.append(now)
            let rows = try await postgres.query(PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM flaphub_mark_delivered($1, $2)", binds: b))
            return try rows.map(Self.message)
        }
        var marked: [Message] = []
        for start in stride(from: 0, to: valid.count, by: DeliveryMarks.batch) {
            let some = valid[start..<min(start + DeliveryMarks.batch, valid.count)].map(SQLValue.text)
            let places = Array(repeating: "?", count: some.count).joined(separator: ",")
            let rows = try await db.query("UPDATE messages SET delivered_at = ? WHERE id IN (\(places)) AND delivered_at IS NULL AND expires_at > ? RETURNING \(Self.columns)",
                                          [.double(now)] + some + [.double(now)])
            marked += try rows.map(Self.message)
        }
        return marked
    }

    /// Marks a message displayed by its recipient; returns it when this marked it — nil when it
    /// is not theirs or was marked already (a board reports at least once: the sender is told once).
    /// A message must be delivered first (`markDelivered`).
    public func markDisplayed(_ id: String, by recipient: String, now: Double) async throws -> Message? {
        guard Self.isID(id) else { return nil }
        let rows = try await db.query("""
            UPDATE messages SET displayed_at = ? WHERE id = ? AND recipient_id = ? AND displayed_at IS NULL AND expires_at > ? \
            RETURNING \(Self.columns)
            """, [.double(now), .text(id.lowercased()), .text(recipient), .double(now)])
        return try rows.first.map(Self.message)
    }

    /// Deletes expired messages and sends older than an hour; returns how many messages went.
    @discardableResult
    public func purge(now: Double) async throws -> Int {
        let expired = try await db.query("SELECT count(*) FROM messages WHERE expires_at <= ?", [.double(now)]).first?.first?.int ?? 0
        try await db.query("DELETE FROM messages WHERE expires_at <= ?", [.double(now)])
        try await db.query("DELETE FROM sends WHERE at <= ?", [.double(now - 3600)])
        try await db.query("DELETE FROM sign_in_links WHERE expires_at <= ?", [.double(now)])
        try await db.query("DELETE FROM sessions WHERE expires_at <= ?", [.double(now)])
        return Int(expired)
    }

    private func messages(_ clause: String, _ p: [SQLValue]) async throws -> [Message] {
        try await db.query("SELECT \(Self.columns) FROM messages \(clause)", p).map(Self.message)
    }

    /// A message from a row of `columns`.
    static func message(_ r: [SQLValue]) throws(HubError) -> Message {
            Message(id: try r.text(0), senderID: try r.text(1), recipientID: try r.text(2), content: try r.text(3),
                    contentType: InboxMessage.ContentType(rawValue: try r.text(4)) ?? .text, createdAt: try r.double(5),
                    unlockAt: r[6].double, expiresAt: try r.double(7), deliveredAt: r[8].double, displayedAt: r[9].double,
                    options: r[10].text.flatMap { try? JSONDecoder().decode(MessageOptions.self, from: Data($0.utf8)) } ?? MessageOptions())
    }

    /// The message as the API writes it.
    public func api(_ m: Message) async throws -> APIMessage {
        Self.api(m, sender: try await user(m.senderID))
    }

    /// The message as the API writes it, its sender known.
    static func api(_ m: Message, sender: User?) -> APIMessage {
        APIMessage(id: m.id, senderID: m.senderID, senderUsername: sender?.username ?? "?",
                          senderDisplayName: sender?.displayName, recipientID: m.recipientID, content: m.content,
                          contentType: m.contentType, timestamp: m.createdAt, unlockAt: m.unlockAt,
                          expiresAt: m.expiresAt, status: m.status, transition: m.options.transition, arriveAt: m.options.arriveAt,
                          duration: m.options.duration, forced: m.options.forced)
    }
}
