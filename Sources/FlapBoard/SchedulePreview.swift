import FlapConfig
import FlapCore
import FlapMessages
import Foundation

/// What each board of a config would show at an instant, from its schedule alone: each entry's
/// message as it would be then (what it said last, while that lives), routed and composed by
/// the mailroom's one rule. A zone that rotates shows the newest of its messages; a hold is not
/// known ahead and not applied; people's messages are not in it.
public struct SchedulePreview: Sendable {
    /// Per board of the config: the frame it would show.
    public var frames: [Frame]
    /// Per schedule entry: the message it shows at the instant (nil: none), and when it speaks next.
    public var entries: [(entry: ScheduleEntry, shows: InboxMessage?, next: Double?)]
    /// Problems composing (a message that cannot show, a cut).
    public var notes: [String]

    /// `sources`: their values as kept (or given); an entry whose sources are stale shows
    /// nothing, unless it says `when_stale: show`.
    public init(config: FlapdConfig, at t: Double, sources: ScheduleSources? = nil) {
        let calendar = config.calendar
        var inbox = Inbox()
        entries = config.schedule.map { e in
            let fresh = e.sources.isEmpty || e.whenStale == .show || sources?.areFresh(e.sources, at: t) == true
            let shows = !fresh ? nil : e.current(at: t, in: calendar) { sources?.text($0, at: $1, calendar: calendar) }
            return (e, shows, e.when.next(after: t, in: calendar))
        }
        for m in entries.compactMap(\.shows).sorted(by: { $0.sentAt < $1.sentAt }) { inbox.receive(m, now: t) }
        inbox.advance(now: t)
        let zones = config.routedZones
        var cursors = zones.map { _ in ZoneCursor() }
        var unrouted: Set<String> = []
        let composed = WallComposition(visible: inbox.visible, router: SenderRouter(zones: zones), cursors: &cursors,
                                       config: config, at: t, unrouted: &unrouted)
        frames = config.boards.indices.map { i in
            composed.boards[i]?.frame ?? Frame(rows: config.boards[i].rows, cols: config.boards[i].cols, filledWith: config.boards[i].drum.glyphs[0])
        }
        notes = composed.notes.map { "\($0.message)" + ($0.metadata.map { " \($0)" } ?? "") }
    }
}
