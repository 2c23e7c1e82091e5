import FlapCore
/// The latest message of each sender, the messages held until they unlock, and the ids already
/// seen (the message API delivers at least once, so a message may arrive twice). A value with
/// no clock: every change takes `now` (seconds since 1970).
///
/// "Latest" is the message made visible last: a held message that unlocks replaces what its
/// sender showed before. A message expires 48 h after it was sent, held or not. The local
/// sender (`InboxMessage.localSenderID`) is one sender among the others, except that its newest
/// message always replaces the one before, never expires, and a catch-up with the server
/// leaves it alone.
///
/// A temporary message (one with a `duration`) shows over its sender's message, which is kept
/// beneath it: when it goes (its duration over, or deleted), the one beneath shows again.
public struct Inbox: Codable, Hashable, Sendable {
    /// The message each sender shows, by sender id.
    public private(set) var live: [String: InboxMessage] = [:]
    /// Under a sender's temporary message: what it showed before, to show again after.
    public private(set) var beneath: [String: InboxMessage] = [:]
    /// Messages waiting for their `unlockAt`.
    public private(set) var held: [InboxMessage] = []
    /// Ids already taken (or deleted), with when each may be forgotten.
    private var seen: [String: Double] = [:]

    public init() {}

    private enum CodingKeys: String, CodingKey { case live, beneath, held, seen }

    /// Reads an inbox saved by this version or an earlier one (without `beneath`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // Bounded as a server's are (`InboxMessage.bounded`): the file is read at every start.
        live = try c.decode([String: InboxMessage].self, forKey: .live).mapValues(\.bounded)
        beneath = (try c.decodeIfPresent([String: InboxMessage].self, forKey: .beneath) ?? [:]).mapValues(\.bounded)
        held = try c.decode([InboxMessage].self, forKey: .held).map(\.bounded)
        seen = try c.decode([String: Double].self, forKey: .seen)
    }

    /// Makes `message` its sender's live one; a temporary message keeps what it covers beneath.
    private mutating func show(_ message: InboxMessage) {
        let sender = message.senderID
        if message.duration == nil { beneath[sender] = nil }
        else if let current = live[sender], current.duration == nil { beneath[sender] = current }
        live[sender] = message
    }

    /// What taking a message did.
    public enum Outcome: Equatable, Sendable {
        case shown, held, duplicate, expired, superseded
    }

    /// Takes one message. A second delivery of an id already taken changes nothing.
    @discardableResult
    public mutating func receive(_ message: InboxMessage, now: Double) -> Outcome {
        if message.isLocal {
            // Delivered once, by this process: nothing to remember, and the newest wins.
            show(message)
            return .shown
        }
        guard seen[message.id] == nil else { return .duplicate }
        guard now < message.expiresAt else { return .expired }
        seen[message.id] = message.expiresAt
        if message.visibleAt > now {
            held.append(message)
            return .held
        }
        if let current = live[message.senderID], current.visibleAt > message.visibleAt { return .superseded }
        show(message)
        return .shown
    }

    /// Removes a message wherever it is. Returns whether it was live (the board changes).
    @discardableResult
    public mutating func delete(id: String, now: Double) -> Bool {
        seen[id] = seen[id] ?? now + InboxMessage.lifetime
        held.removeAll { $0.id == id }
        if let sender = beneath.first(where: { $0.value.id == id })?.key { beneath[sender] = nil }
        guard let sender = live.first(where: { $0.value.id == id })?.key else { return false }
        live[sender] = beneath.removeValue(forKey: sender)
        return true
    }

    /// Makes the inbox what the server says it is after a catch-up: messages the server no
    /// longer has (deleted while the board was away) go; the server's messages are taken
    /// (those already here stay as they are). Returns whether anything live changed.
    @discardableResult
    public mutating func sync(with server: [InboxMessage], now: Double) -> Bool {
        let before = live
        let ids = Set(server.map(\.id))
        for m in Array(live.values) + Array(beneath.values) + held where !m.isOwn && !ids.contains(m.id) { delete(id: m.id, now: now) }
        for m in server.sorted(by: { $0.visibleAt < $1.visibleAt }) { receive(m, now: now) }
        return live != before
    }

    /// Unlocks held messages whose time has come — `lead` seconds before their unlock instant,
    /// so that a board can start early and land on it — and drops expired ones. Returns whether
    /// anything live changed.
    @discardableResult
    public mutating func advance(now: Double, lead: Double = 0) -> Bool {
        let before = live
        let due = held.filter { $0.visibleAt <= now + lead }.sorted { $0.visibleAt < $1.visibleAt }
        held.removeAll { $0.visibleAt <= now + lead || $0.expiresAt <= now }
        for m in due where m.expiresAt > now {
            if let current = live[m.senderID], current.visibleAt > m.visibleAt { continue }
            show(m)
        }
        beneath = beneath.filter { $0.value.expiresAt > now }
        for (sender, m) in live where m.expiresAt <= now { live[sender] = beneath.removeValue(forKey: sender) }
        seen = seen.filter { $0.value > now }
        return live != before
    }

    /// The next instant `advance` would change something, if any.
    public var nextChange: Double? { nextChange(lead: 0) }

    /// The same, when held messages unlock `lead` seconds early.
    public func nextChange(lead: Double) -> Double? {
        (held.map { $0.visibleAt - lead } + live.values.map(\.expiresAt)).filter(\.isFinite).min()
    }

    /// Live messages, oldest visible first.
    public var visible: [InboxMessage] {
        live.values.sorted { ($0.visibleAt, $0.id) < ($1.visibleAt, $1.id) }
    }

    /// Whether this id has been taken already.
    public func contains(id: String) -> Bool { seen[id] != nil }
}
