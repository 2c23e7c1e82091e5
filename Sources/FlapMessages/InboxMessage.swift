import FlapCore
/// One message of the message API, as a board keeps it: who sent it, what it says, when it
/// was sent, and when it may first be shown. Times are seconds since 1970 (UTC).
public struct InboxMessage: Codable, Hashable, Sendable {
    /// What `content` holds.
    public enum ContentType: String, Codable, Sendable, CaseIterable {
        /// Text, laid out on the zone (`{NN}` codes allowed).
        case text
        /// Rows of Vestaboard codes as JSON (`[[63,64],[65]]`), placed from the zone's top-left.
        case pattern
        /// A VBML document (JSON), rendered onto the zone's size.
        case vbml
    }

    /// How long a message lives after it was sent (48 h, as the message API says).
    public static let lifetime: Double = 48 * 3600
    /// The sender id of the local API (and of `flapd demo --once`): the board's own sender, which
    /// zones list as `@local`. Its message stays until the next replaces it: it never expires,
    /// and the newest always wins, whatever the wall clock did in between.
    public static let localSenderID = "@local"

    public var id: String
    public var senderID: String
    /// The sender's username (what zones and name lines use).
    public var senderName: String
    public var content: String
    public var contentType: ContentType
    public var sentAt: Double
    /// Held until this instant when it lies ahead ("opens once it has arrived").
    public var unlockAt: Double?
    /// When the server says it expires, if it says (else 48 h after it was sent).
    public var expiry: Double?
    /// How the board moves to it, when the message says (else the board's own style).
    public var transition: TransitionFields?
    /// The instant every module of its boards lands on it, when the message asks for one.
    public var arriveAt: Double?
    /// A temporary message: shown this many seconds (`durationRange`), then what its sender
    /// showed before comes back.
    public var duration: Double?
    /// Shown even in quiet hours.
    public var forced: Bool?
    /// Against the zone's other messages (a schedule entry's); nil: `under`.
    public var priority: Priority?
    /// Once shown, nothing new replaces it in its zone for this many seconds (a schedule entry's
    /// `min_hold_seconds`).
    public var holdSeconds: Double?

    /// In a rotating zone, shown this many seconds in its turn (a schedule entry's
    /// `dwell_seconds`); nil: the zone's `rotate_seconds`.
    public var dwellSeconds: Double?

    /// How a message stands against the other messages of its zone.
    public enum Priority: String, Codable, Sendable, CaseIterable {
        /// Shown over them while it lives, even when theirs are newer.
        case over
        /// As any sender's: the newest message shows.
        case under
        /// Shown only when the zone has nothing else to show.
        case idle
    }

    /// How long a temporary message may show: 10 s to 12 h.
    public static let durationRange: ClosedRange<Double> = 10...43_200

    public init(id: String, senderID: String, senderName: String, content: String,
                contentType: ContentType = .text, sentAt: Double, unlockAt: Double? = nil, expiry: Double? = nil,
                transition: TransitionFields? = nil, arriveAt: Double? = nil, duration: Double? = nil, forced: Bool? = nil,
                priority: Priority? = nil, holdSeconds: Double? = nil, dwellSeconds: Double? = nil) {
        self.id = id
        self.senderID = senderID
        self.senderName = senderName
        self.content = content
        self.contentType = contentType
        self.sentAt = sentAt
        self.unlockAt = unlockAt
        self.expiry = expiry
        self.transition = transition
        self.arriveAt = arriveAt
        self.duration = duration
        self.forced = forced
        self.priority = priority
        self.holdSeconds = holdSeconds
        self.dwellSeconds = dwellSeconds
    }

    /// Whether it came from the local API rather than the message API.
    public var isLocal: Bool { senderID == Self.localSenderID }
    /// Whether the board itself sent it (the local sender, a schedule entry: ids that begin with
    /// `@`), not the message API — whose catch-up leaves it alone and to which it is not reported.
    public var isOwn: Bool { senderID.hasPrefix("@") }

    /// When it goes away: the server's expiry, never later than 48 h after it was sent (never for
    /// a local message); a temporary message, `duration` after it became visible.
    public var expiresAt: Double {
        min(isLocal ? .infinity : min(expiry ?? .infinity, sentAt + Self.lifetime), duration.map { visibleAt + $0 } ?? .infinity)
    }
    /// When it may first be shown.
    public var visibleAt: Double { max(sentAt, unlockAt ?? sentAt) }

    /// The instants a board takes as they are: 1970 to 2100, as the message API bounds `arriveAt`.
    public static let instants: ClosedRange<Double> = 0...4_102_444_800

    /// The message with every time a board waits on or counts with within bounds: its instants
    /// within `instants`, `duration` within `durationRange`, a hold within 0–3600 s and a dwell
    /// within 1–86,400 s (a schedule entry's own bounds). What a server or a state file says is
    /// never taken as it is: an unlock instant of 1e308 stopped flapd at its wait (Swift's
    /// `Duration` traps past some 10²⁰ s), and, kept in `inbox.json`, at every start after.
    public var bounded: InboxMessage {
        func clamp(_ x: Double, _ range: ClosedRange<Double>) -> Double { min(max(x, range.lowerBound), range.upperBound) }
        var m = self
        m.sentAt = clamp(sentAt, Self.instants)
        m.unlockAt = unlockAt.map { clamp($0, Self.instants) }
        m.expiry = expiry.map { clamp($0, Self.instants) }
        m.arriveAt = arriveAt.map { clamp($0, Self.instants) }
        m.duration = duration.map { clamp($0, Self.durationRange) }
        m.holdSeconds = holdSeconds.map { clamp($0, 0...3600) }
        m.dwellSeconds = dwellSeconds.map { clamp($0, 1...86_400) }
        return m
    }
}
