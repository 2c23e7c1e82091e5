import FlapCore
/// Which message a zone shows, among the live messages routed to it: the newest, as soon as it
/// arrives; with rotation, each sender in turn for `rotateSeconds`. A value; `now` is passed in.
public struct ZoneCursor: Codable, Hashable, Sendable {
    /// The sender shown, if any.
    public private(set) var senderID: String?
    /// When it was put up.
    public private(set) var since: Double = 0
    /// The newest message this zone has had, so a new arrival shows at once.
    private var newestID: String?

    public init() {}

    /// Picks the message to show from `candidates` (oldest visible first) and returns it with
    /// the instant the choice should be made again (a rotation step), if any.
    ///
    /// Priorities first: while a message of priority `over` lives, only such messages take part;
    /// `idle` ones take part only when nothing else would show. And a message shown with a hold
    /// (`holdSeconds`) stays until its hold is over, whatever arrives meanwhile. In rotation each
    /// message stays its own `dwellSeconds`, or `rotateSeconds`.
    public mutating func pick(_ all: [InboxMessage], rotateSeconds: Double?, now: Double)
        -> (message: InboxMessage?, next: Double?) {
        if let shown = all.first(where: { $0.senderID == senderID }), let hold = shown.holdSeconds, now < since + hold {
            return (shown, since + hold)
        }
        let candidates = Self.taking(all)
        guard let newest = candidates.last else {
            senderID = nil
            return (nil, nil)
        }
        let index = candidates.firstIndex { $0.senderID == senderID }
        if newest.id != newestID || index == nil {
            // Something new arrived since the last choice, or the sender shown is gone.
            newestID = newest.id
            senderID = newest.senderID
            since = now
            return (newest, rotation(candidates.count, newest.dwellSeconds ?? rotateSeconds))
        }
        let shown = candidates[index!]
        if let rotate = rotateSeconds, candidates.count > 1, now >= since + (shown.dwellSeconds ?? rotate), let i = index {
            let next = candidates[(i + 1) % candidates.count]
            senderID = next.senderID
            since = now
            return (next, now + (next.dwellSeconds ?? rotate))
        }
        return (shown, rotation(candidates.count, rotateSeconds.map { shown.dwellSeconds ?? $0 }))
    }

    /// The messages that take part, by priority (in the order given).
    static func taking(_ all: [InboxMessage]) -> [InboxMessage] {
        let over = all.filter { $0.priority == .over }
        if !over.isEmpty { return over }
        let others = all.filter { $0.priority != .idle }
        return others.isEmpty ? all : others
    }

    private func rotation(_ count: Int, _ rotate: Double?) -> Double? {
        guard let rotate, count > 1 else { return nil }
        return since + rotate
    }
}
