import Foundation

/// One entry of the config's `schedule:`: a sender of the board's own, which speaks its text at
/// the times of its `when` — into the inbox like any sender, routed to the zones that list it.
public struct ScheduleEntry: Sendable, Equatable {
    /// The entry's name in the config; zones list it by this name or by `senderID`.
    public var id: String
    public var when: ScheduleWhen
    public var content: Content
    /// A temporary message: shown this many seconds, then what was there before comes back;
    /// nil: it stays until something replaces it (at most the 48 h of every message).
    public var duration: Double?
    public var priority: InboxMessage.Priority
    /// Once shown, nothing new replaces it for this many seconds.
    public var holdSeconds: Double?
    /// What it does when a source it reads is stale (or has no value yet).
    public var whenStale: Stale
    /// In a rotating zone, shown this many seconds in its turn (nil: the zone's `rotate_seconds`).
    public var dwellSeconds: Double?

    /// `when_stale:` of an entry.
    /// What it says: a text, or a VBML document whose props are texts (filled in when it speaks).
    public enum Content: Sendable, Equatable {
        case text(ScheduleText)
        case vbml(VBMLDocument, props: [String: ScheduleText])
    }

    /// The sources its content reads, by id.
    public var sources: Set<String> {
        switch content {
        case .text(let t): t.sources
        case .vbml(_, let props): props.values.reduce(into: Set<String>()) { $0.formUnion($1.sources) }
        }
    }

    public enum Stale: String, Sendable, Hashable, CaseIterable {
        /// It says nothing until its sources are fresh again.
        case skip
        /// It says its text with the sources' last good values (`{{age:…}}` can say how old).
        case show
    }

    public init(id: String, when: ScheduleWhen, text: ScheduleText, duration: Double? = nil,
                priority: InboxMessage.Priority = .under, holdSeconds: Double? = nil, whenStale: Stale = .skip) {
        self.init(id: id, when: when, content: .text(text), duration: duration, priority: priority, holdSeconds: holdSeconds, whenStale: whenStale)
    }

    public init(id: String, when: ScheduleWhen, content: Content, duration: Double? = nil,
                priority: InboxMessage.Priority = .under, holdSeconds: Double? = nil, whenStale: Stale = .skip) {
        self.id = id; self.when = when; self.content = content; self.duration = duration
        self.priority = priority; self.holdSeconds = holdSeconds; self.whenStale = whenStale
    }

    /// The sender id of its messages: `@schedule:` and its name (the `@` marks the board's own
    /// senders, which a catch-up with the message API leaves alone).
    public var senderID: String { Self.senderPrefix + id }
    public static let senderPrefix = "@schedule:"

    /// What it says when it speaks at `instant`: its text filled in for that instant. The id is
    /// the entry's and the instant's, so saying it again (after a restart) is a duplicate.
    public func message(at instant: Double, in calendar: Calendar,
                        source: (ScheduleText.SourceProp) -> String? = { _ in nil }) -> InboxMessage {
        let (body, type): (String, InboxMessage.ContentType)
        switch content {
        case .text(let text): (body, type) = (text.render(at: instant, in: calendar, source: source), .text)
        case .vbml(var document, let props):
            var filled = document.props ?? [:]
            for (name, text) in props { filled[name] = .string(text.render(at: instant, in: calendar, source: source)) }
            document.props = filled
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            (body, type) = ((try? encoder.encode(document)).map { String(decoding: $0, as: UTF8.self) } ?? "{}", .vbml)
        }
        return InboxMessage(id: "\(senderID)@\(Int64(instant))", senderID: senderID, senderName: id,
                     content: body, contentType: type, sentAt: instant, duration: duration,
                     priority: priority == .under ? nil : priority, holdSeconds: holdSeconds, dwellSeconds: dwellSeconds)
    }

    /// The message it shows at `t`, if any: what it said last, while that still lives (a
    /// temporary one for its duration, a lasting one for the 48 h of every message). `source`
    /// reads a source's prop as of an instant: the one it spoke at.
    public func current(at t: Double, in calendar: Calendar,
                        source: (ScheduleText.SourceProp, Double) -> String? = { _, _ in nil }) -> InboxMessage? {
        guard let last = when.last(atOrBefore: t, in: calendar) else { return nil }
        let m = message(at: last, in: calendar) { source($0, last) }
        return m.expiresAt > t ? m : nil
    }
}
