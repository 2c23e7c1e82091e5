import FlapCore
/// A message as the message API writes it in JSON, over REST and in WebSocket events.
/// Times are seconds since 1970 (UTC).
public struct APIMessage: Codable, Hashable, Sendable {
    public var id: String
    public var senderID: String
    public var senderUsername: String
    public var senderDisplayName: String?
    public var recipientID: String?
    public var content: String
    public var contentType: InboxMessage.ContentType
    /// When it was sent.
    public var timestamp: Double
    public var unlockAt: Double?
    public var expiresAt: Double?
    /// Delivery to this recipient: pending, delivered or displayed.
    public var status: String?
    /// How the board moves to it (a Flapboard extension; the board's own style when absent).
    public var transition: TransitionFields?
    /// The instant every module lands on it (a Flapboard extension).
    public var arriveAt: Double?
    /// A temporary message's seconds on the board (a Flapboard extension).
    public var duration: Double?
    /// Shown even in the board's quiet hours (a Flapboard extension, as Vestaboard's `forced`).
    public var forced: Bool?

    public init(id: String, senderID: String, senderUsername: String, senderDisplayName: String? = nil,
                recipientID: String? = nil, content: String, contentType: InboxMessage.ContentType = .text,
                timestamp: Double, unlockAt: Double? = nil, expiresAt: Double? = nil, status: String? = nil,
                transition: TransitionFields? = nil, arriveAt: Double? = nil, duration: Double? = nil, forced: Bool? = nil) {
        self.id = id
        self.senderID = senderID
        self.senderUsername = senderUsername
        self.senderDisplayName = senderDisplayName
        self.recipientID = recipientID
        self.content = content
        self.contentType = contentType
        self.timestamp = timestamp
        self.unlockAt = unlockAt
        self.expiresAt = expiresAt
        self.status = status
        self.transition = transition
        self.arriveAt = arriveAt
        self.duration = duration
        self.forced = forced
    }

    /// The message as a board keeps it, its times bounded (`InboxMessage.bounded`).
    public var inboxMessage: InboxMessage {
        InboxMessage(id: id, senderID: senderID, senderName: senderUsername, content: content,
                     contentType: contentType, sentAt: timestamp, unlockAt: unlockAt, expiry: expiresAt,
                     transition: transition, arriveAt: arriveAt, duration: duration, forced: forced).bounded
    }
}

/// `GET /api/v1/messages/inbox`: the latest message of each sender.
public struct APIInbox: Codable, Sendable {
    public var messages: [APIMessage]
    public init(messages: [APIMessage]) { self.messages = messages }
}
