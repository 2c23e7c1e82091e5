import FlapClock
import FlapMessages
import Foundation
import Logging
import Synchronization

/// The schedule's voice: says each entry's message into the mailroom at the entry's times — one
/// way in, like any sender. At its start it says what each entry shows at that instant (said
/// before, still living: a restart does not lose the morning's message, and saying it again is a
/// duplicate the inbox drops). A clock that jumps (a suspended machine, NTP) is caught up in one
/// step: each entry says its latest message, never a backlog. An entry whose sources are stale
/// says nothing at its time (`when_stale: skip`) until they are fresh again while its message
/// would still live — then it speaks, late.
public final class ScheduleSpeaker: Sendable {
    private struct State {
        var entries: [ScheduleEntry]
        var calendar: Calendar
        /// Per entry id: when it last spoke.
        var spoke: [String: Double] = [:]
        /// Per entry id: the time it did not speak at, its sources stale.
        var skipped: [String: Double] = [:]
    }
    private let state: Mutex<State>
    private let say: @Sendable (InboxMessage) async -> Void
    private let sources: ScheduleSources?
    private let now: @Sendable () -> Double
    private let logger: Logger
    /// Rung when the entries change.
    private let bell = Doorbell()
    /// Waits until an instant of `now`'s clock, or the bell; the test's clock passes in its own.
    private let wait: @Sendable (_ until: Double, _ bell: Doorbell) async -> Void

    public init(entries: [ScheduleEntry], calendar: Calendar, sources: ScheduleSources? = nil, logger: Logger,
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                wait: (@Sendable (Double, Doorbell) async -> Void)? = nil,
                say: @escaping @Sendable (InboxMessage) async -> Void) {
        state = Mutex(State(entries: entries, calendar: calendar))
        self.say = say
        self.sources = sources
        self.now = now
        self.logger = logger
        self.wait = wait ?? { until, bell in await bell.wait(seconds: until - now()) }
        sources?.onChange { [bell] _ in bell.ring() }
    }

    /// A reloaded config's entries: they speak from now on (what the old ones said stays in the
    /// inbox until it goes by its own rule).
    public func update(entries: [ScheduleEntry], calendar: Calendar) {
        state.withLock { $0.entries = entries; $0.calendar = calendar }
        bell.ring()
    }

    /// Speaks until cancelled.
    public func run() async {
        var since = -Double.infinity
        while !Task.isCancelled {
            let t = now()
            let (entries, calendar) = state.withLock { ($0.entries, $0.calendar) }
            // Every entry that spoke since the last round (or waits for its sources) says its
            // latest message, if it lives.
            for e in entries {
                guard let last = e.when.last(atOrBefore: t, in: calendar),
                      last > since || state.withLock({ $0.skipped[e.id] == last }) else { continue }
                let reads = e.sources
                if e.whenStale == .skip, !reads.isEmpty, !(sources?.areFresh(reads, at: t) ?? false) {
                    let first = state.withLock { s in defer { s.skipped[e.id] = last }; return s.skipped[e.id] != last }
                    if first { logger.notice("schedule \(e.id) says nothing at its time: a source it reads is stale or has no value yet (\(reads.sorted().joined(separator: ", ")))") }
                    continue
                }
                state.withLock { $0.spoke[e.id] = last; $0.skipped[e.id] = nil }
                let m = e.message(at: last, in: calendar) { [sources] prop in sources?.text(prop, at: last, calendar: calendar) }
                guard m.expiresAt > t else { continue }
                await say(m)
            }
            since = t
            let next = entries.compactMap { $0.when.next(after: t, in: calendar) }.min()
            if next == nil, !entries.isEmpty { logger.notice("the schedule has no time left to speak at") }
            await wait(next ?? .infinity, bell)
        }
    }

    /// Each entry as `/status` lists it: when it speaks next, and when it last spoke.
    public func status(at t: Double) -> [StatusReport.ScheduleEntryStatus] {
        state.withLock { s in
            s.entries.map { e in
                StatusReport.ScheduleEntryStatus(id: e.id, sender: e.senderID, next: e.when.next(after: t, in: s.calendar),
                                                 last: s.spoke[e.id], priority: e.priority, forSeconds: e.duration,
                                                 sources: e.sources.isEmpty ? nil : sources?.status(e.sources, at: t),
                                                 skipped: s.skipped[e.id])
            }
        }
    }
}
