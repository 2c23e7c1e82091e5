import FlapClock
import FlapConfig
import FlapCore
import FlapMessages
import FlapNet
import Foundation
import Logging
import Synchronization

/// The one way onto the wall: every message — of the message API, of the local API, of
/// `flapd demo --once` — goes into one inbox, each sender to its zones, and each board's frame is
/// composed from its zones by one rule and shown when it changes. Wakes for unlocks, expiries
/// and rotation; reports a message-API message displayed once its board has settled.
///
/// The one writer of its boards: every change — a message taken or posted, a timer, a reload's
/// re-route — runs in turn on the mailroom's own serial queue (off the async executors: the
/// inbox is saved there, with its fsync), and the wall is called there with no lock held.
///
/// The rule: each zone shows the newest visible message of its senders (or, with
/// `rotate_seconds`, each in turn); held letters open at their `unlockAt`; a message goes when
/// deleted or 48 h after it was sent (the local sender's stays until the next). Where zones
/// overlap — the local sender's whole-board zone and the zones of the message API — the newer
/// message is drawn over the older; a zone with nothing to show draws nothing.
public final class Mailroom: Sendable {
    private struct State {
        var saved = InboxStore.Saved()
        var router: SenderRouter
        var cursors: [ZoneCursor]
        /// Per board: the frame last composed.
        var composed: [Int: Frame] = [:]
        var unrouted: Set<String> = []
        /// When the clock next wakes the mailroom (seconds since 1970): an unlock, an expiry, a
        /// rotation, the end of quiet hours; nil: nothing is due.
        var nextWake: Double?
        /// Stopped: changes are still saved, but no board is shown any more.
        var stopped = false
        /// Per board held by quiet hours: the messages it waits to show, and when the hours end.
        /// `until` is nil while quiet is switched on by hand (`setQuiet(true)`).
        var quietHeld: [Int: (messages: [InboxMessage], until: Double?)] = [:]
        /// Quiet switched by hand: on, off, or nil for the configured hours.
        var quietSwitch: Bool?
        /// A calibration session holds the wall (`setCalibrating`): every board stays as it is.
        var calibrating = false
        /// What each zone showed at the last composition (in the router's order).
        var zoneShows: [StatusReport.ZoneShows] = []
        /// Per board: when it was last shown a frame (seconds since 1970).
        var shownAt: [Int: Double] = [:]
    }

    private let wall: Wall
    private let store: InboxStore?
    private let logger: Logger
    private let now: @Sendable () -> Double
    private let settled: @Sendable (_ board: Int, _ transition: Int) async -> Void
    /// Read by `inbox` from any thread; changed only on `desk`.
    private let state: Mutex<State>
    /// Where every change runs, one after another: saves take turns (the newest lands last), a
    /// message counts in `inbox` (so in `/status`) only once the file holds it, and the boards
    /// are shown in the order the inbox changed.
    private let desk = DispatchQueue(label: "flapd-mailroom")
    private let reporter = Mutex<(@Sendable (String) -> Void)?>(nil)
    private let showsReporter = Mutex<(@Sendable ([[Int]]) -> Void)?>(nil)
    /// Rung when `nextWake` changes, and at the stop.
    private let clock = Doorbell()
    /// Boards to wait for, and then the messages to report displayed on them: taken by `run`.
    private let settles = AsyncStream<Settle>.makeStream()
    private struct Settle: Sendable {
        var board: Int, transition: Int, ids: [String]
    }

    /// - Parameters:
    ///   - settled: returns once the board has settled at that transition (or a later one).
    ///   - now: seconds since 1970.
    public init(wall: Wall, zones: [Zone], store: InboxStore?, logger: Logger,
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                settled: @escaping @Sendable (Int, Int) async -> Void) {
        self.wall = wall
        self.store = store
        self.logger = logger
        self.now = now
        self.settled = settled
        state = Mutex(State(router: SenderRouter(zones: zones), cursors: zones.map { _ in ZoneCursor() }))
    }

    /// Runs `work` on the desk, after every change given before it.
    private func onDesk<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in desk.async { continuation.resume(returning: work()) } }
    }

    /// Where `message.displayed` reports go (the API client).
    public func reportDisplayed(to report: @escaping @Sendable (String) -> Void) { reporter.withLock { $0 = report } }
    /// Tells `report` what the local board (or grid) shows: when the mailroom starts, and each
    /// time a board settles.
    public func reportShows(to report: @escaping @Sendable ([[Int]]) -> Void) { showsReporter.withLock { $0 = report } }

    /// Takes the saved inbox back and shows it. The boards' own saved state is restored first,
    /// so a board whose messages have not changed does not move.
    public func restore() async { await onDesk { self.restoreOnDesk() } }

    private func restoreOnDesk() {
        guard let store else { return }
        do {
            let first = !FileManager.default.fileExists(atPath: store.file)
            var saved = try store.load()
            if first, let kept = shownBefore() {
                // A state dir from before the local API was a sender: what the board showed stays.
                saved.inbox.receive(kept, now: now())
            }
            // What each board is going to, read before the lock: the wall is never called under it.
            let targets = wall.config.boards.indices.map { wall.target(board: $0) }
            state.withLock { s in
                s.saved = saved
                for b in Set(s.router.zones.map(\.board)) where b < targets.count { s.composed[b] = targets[b] }
            }
            logger.info("inbox restored", metadata: ["senders": "\(saved.inbox.live.count)", "held": "\(saved.inbox.held.count)"])
            reportAgain(saved)
        } catch {
            logger.error("cannot read the saved inbox: \(error); starting empty")
        }
        refreshOnDesk()
    }

    /// Reports again the messages an earlier run reported displayed that the restored boards
    /// still show: that run may have stopped before the server took its report up (the client
    /// keeps unconfirmed reports only while it runs), and the hub tells a sender once however
    /// often a board reports.
    private func reportAgain(_ saved: InboxStore.Saved) {
        let live = Set(saved.inbox.live.values.map(\.id))
        let again = saved.displayed.filter(live.contains).sorted()
        guard !again.isEmpty, let report = reporter.withLock({ $0 }) else { return }
        logger.debug("reporting again the messages shown", metadata: ["ids": "\(again.joined(separator: ","))"])
        again.forEach(report)
    }

    /// What the first zone of the local sender shows on its restored board, as a local message
    /// older than any other; nil when that is blank.
    private func shownBefore() -> InboxMessage? {
        guard let zone = state.withLock({ $0.router.zones.first(where: \.takesLocal) }) else { return nil }
        let codes = wall.target(board: zone.board).codes
        let part = zone.rows.map { r in zone.cols.map { c in Int(codes[r][c]) } }
        guard part.joined().contains(where: { $0 != 0 }) else { return nil }
        return InboxMessage(id: "local-restored", senderID: InboxMessage.localSenderID, senderName: "local",
                            content: PatternCodes.text(part), contentType: .pattern, sentAt: 0)
    }

    /// Applies one event of the API client: saved first, then counted and shown — a message
    /// the board shows, or holds for later, survives a kill from then on (the API cannot be
    /// counted on to bring it back: it may be unreachable after the restart).
    public func take(_ event: MessageAPIClient.Event) async { await onDesk { self.takeOnDesk(event) } }

    private func takeOnDesk(_ event: MessageAPIClient.Event) {
        let t = now()
        var next = state.withLock { $0.saved }
        switch event {
        case .caughtUp(let messages):
            next.inbox.sync(with: messages, now: t)
        case .new(let m) where m.isOwn:
            logger.warning("a message-API message claims a sender id of the board's own (@…); dropped", metadata: ["id": "\(m.id)", "sender": "\(m.senderID)"])
            return
        case .new(let m):
            let outcome = next.inbox.receive(m, now: t)
            let nowhere = (outcome == .shown || outcome == .held) && state.withLock { $0.router.zones(for: m).isEmpty }
            logger.info(nowhere ? "message not shown: its sender is in no zone" : "message \(outcome)",
                        metadata: ["id": "\(m.id)", "sender": "\(m.senderName)"])
        case .deleted(let id):
            next.inbox.delete(id: id, now: t)
        }
        _ = publish(&next, posted: nil)
    }

    /// Takes a message of the local sender (the local API, `flapd demo --once`): saved, then
    /// shown at once in the zones that take `@local` (by default the whole of the local API's
    /// board). Returns what the board of its first zone is now going to — a transition of no flips
    /// when the board showed this already — with what was cut or substituted in that zone; nil
    /// when no zone takes the local sender.
    /// `how`: the transition the message asks for, and the instant it is to land, if any.
    /// `duration`: a temporary message, shown that many seconds before what was there comes back.
    public func post(_ content: String, type: InboxMessage.ContentType,
                     how: (transition: TransitionFields?, arriveAt: Double?) = (nil, nil), duration: Double? = nil,
                     forced: Bool = false) async -> Wall.Shown? {
        await onDesk {
            let t = self.now()
            let message = InboxMessage(id: "local-\(UUID().uuidString.lowercased())", senderID: InboxMessage.localSenderID,
                                       senderName: "local", content: content, contentType: type, sentAt: t,
                                       transition: how.transition, arriveAt: how.arriveAt, duration: duration,
                                       forced: forced ? true : nil)
            var next = self.state.withLock { $0.saved }
            next.inbox.receive(message, now: t)
            return self.publish(&next, posted: message.id)
        }
    }

    /// Takes a message of one of the board's own senders other than the local one (a schedule
    /// entry's): into the inbox like any message — saved, then shown in the zones that take its
    /// sender. A second delivery of its id changes nothing.
    public func take(own message: InboxMessage) async {
        await onDesk {
            guard message.isOwn, !message.isLocal else { return }
            let t = self.now()
            var next = self.state.withLock { $0.saved }
            let outcome = next.inbox.receive(message, now: t)
            guard outcome != .duplicate else { return }
            self.logger.info("schedule \(message.senderName) speaks: \(outcome)", metadata: ["id": "\(message.id)"])
            _ = self.publish(&next, posted: nil)
        }
    }

    /// A changed inbox: saved, then counted, then shown. On the desk.
    private func publish(_ next: inout InboxStore.Saved, posted: String?) -> Wall.Shown? {
        write(&next)
        state.withLock { [next] in $0.saved = next }
        return refreshOnDesk(posted: posted)
    }

    /// Re-routes after a config reload; no message is lost (the inbox stays).
    public func reroute(_ zones: [Zone]) async {
        await onDesk {
            self.state.withLock { s in
                s.router = SenderRouter(zones: zones)
                s.cursors = zones.map { _ in ZoneCursor() }
            }
            self.refreshOnDesk()
        }
    }

    /// The inbox as it stands.
    public var inbox: Inbox { state.withLock { $0.saved.inbox } }

    /// The messages not on the boards yet: held letters (until their unlock) and, in quiet
    /// hours, those waiting for the hours to end.
    public func waiting() -> [StatusReport.Waiting] {
        state.withLock { s in
            let letters = s.saved.inbox.held.map { StatusReport.Waiting(id: $0.id, sender: $0.senderName, reason: .unlock, until: $0.visibleAt) }
            var quiet: [StatusReport.Waiting] = []
            for (_, held) in s.quietHeld.sorted(by: { $0.key < $1.key }) {
                for m in held.messages where !quiet.contains(where: { $0.id == m.id }) {
                    quiet.append(StatusReport.Waiting(id: m.id, sender: m.senderName, reason: s.calibrating ? .calibration : .quietHours, until: held.until))
                }
            }
            return letters + quiet
        }
    }

    /// When the quiet hours that hold a board end, while they hold one (nil too while quiet is
    /// switched on by hand: see `isQuietHolding`).
    public var quietUntil: Double? { state.withLock { $0.quietHeld.values.compactMap(\.until).min() } }
    /// Whether quiet hours hold a board now (by the clock or switched on by hand).
    public var isQuietHolding: Bool { state.withLock { !$0.quietHeld.isEmpty } }

    /// Switches quiet on (the board moves only for forced messages, or gently), off (even within
    /// the configured hours), or back to the configured hours (nil). Lasts until switched again
    /// or flapd restarts. Shows what switching off lets through.
    public func setQuiet(_ on: Bool?) async {
        _ = await onDesk {
            self.state.withLock { $0.quietSwitch = on }
            self.logger.notice("quiet hours switched \(on.map { $0 ? "on" : "off" } ?? "back to the configured hours")")
            self.refreshOnDesk()
        }
    }

    /// Holds the whole wall for a calibration session (on), or gives it back (off) and shows what
    /// came meanwhile. Messages keep arriving into the inbox, saved as ever; none moves a board.
    public func setCalibrating(_ on: Bool) async {
        _ = await onDesk {
            guard self.state.withLock({ s in defer { s.calibrating = on }; return s.calibrating != on }) else { return }
            self.logger.notice(on ? "calibrating: messages wait until calibration ends" : "calibration over: the boards show their messages again")
            self.refreshOnDesk()
        }
    }

    /// Whether a calibration session holds the wall.
    public var isCalibrating: Bool { state.withLock { $0.calibrating } }

    /// Quiet as it stands at `t`: whether it holds, until when, what it does to messages, and
    /// whether it is switched by hand; nil when no quiet hours are configured nor switched on.
    public func quiet(at t: Double = Date().timeIntervalSince1970) -> StatusReport.Quiet? {
        let on = state.withLock { $0.quietSwitch }
        let now = quietNow(t, switched: on)
        guard now != nil || wall.config.quietHours != nil || on != nil else { return nil }
        return StatusReport.Quiet(active: now != nil, until: now?.until,
                                  messages: wall.config.quietHours?.messages ?? .hold, switched: on)
    }

    /// What quiet does at `t`, if it holds: the switch wins over the configured hours.
    private func quietNow(_ t: Double, switched: Bool?) -> (messages: QuietHours.Messages, until: Double?)? {
        switch switched {
        case .some(false): return nil
        case .some(true): return (wall.config.quietHours?.messages ?? .hold, nil)
        case nil: return wall.config.quietHours.flatMap { $0.holds(at: t) ? ($0.messages, $0.end(after: t)) : nil }
        }
    }

    /// What each zone shows and who sent it, as last composed.
    public func zones() -> [StatusReport.ZoneShows] { state.withLock { $0.zoneShows } }

    /// What a local message would show, without posting it: the part of the first zone that takes
    /// the local sender (its frame, what was cut or substituted, or why it cannot show), and that
    /// zone; nil when no zone takes the local sender.
    public func preview(_ content: String, type: InboxMessage.ContentType) -> (part: Composer.Part, zone: Zone)? {
        let message = InboxMessage(id: "preview", senderID: InboxMessage.localSenderID, senderName: "local",
                                   content: content, contentType: type, sentAt: now())
        guard let zone = state.withLock({ s in s.router.zones(for: message).first.map { s.router.zones[$0] } }),
              zone.board < wall.config.boards.count else { return nil }
        return (Composer().compose(message, in: zone, mapper: wall.config.boards[zone.board].mapper), zone)
    }

    /// Composes every zoned board and shows the boards whose frame changed.
    public func refresh() async { _ = await onDesk { self.refreshOnDesk() } }

    /// `refresh`, on the desk; a board that shows `posted` is shown even when its frame is
    /// unchanged, and what showing it did is returned.
    @discardableResult
    private func refreshOnDesk(posted: String? = nil) -> Wall.Shown? {
        guard !state.withLock({ $0.stopped }) else { return nil }
        let t = now()
        let boards = wall.config.boards
        var changed: [(board: Int, frame: Frame, ids: [String], newest: InboxMessage?)] = []
        var postedPart: Composer.Part?
        var postedBoard: Int?
        var advanced = false
        let (switched, calibrating) = state.withLock { ($0.quietSwitch, $0.calibrating) }
        let quiet = quietNow(t, switched: switched)
        // What each board is going to (read before the lock: the wall is never called under it).
        let targets = quiet == nil && !calibrating ? [] : boards.indices.map { wall.target(board: $0) }
        let config = wall.config
        // What the desk has to say, said once the lock is let go (nothing is logged under it).
        var notes: [(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?)] = []
        let next: Double? = state.withLock { s in
            advanced = s.saved.inbox.advance(now: t, lead: Self.lead(boards))
            let composed = WallComposition(visible: s.saved.inbox.visible, router: s.router, cursors: &s.cursors, config: config,
                                           at: t, unrouted: &s.unrouted, posted: posted)
            notes = composed.notes
            (postedPart, postedBoard) = (composed.posted?.part, composed.posted?.board)
            s.zoneShows = composed.zoneShows
            var next = [s.saved.inbox.nextChange(lead: Self.lead(boards)), composed.next].compactMap { $0 }.min()
            for (board, drawn) in composed.boards {
                let (frame, parts, ids) = (drawn.frame, drawn.parts, drawn.shownIDs)
                let forced = parts.last?.message.forced == true
                if calibrating, targets[board] != frame {
                    // Calibration: the wall is the maker's, even for a forced message.
                    let since = s.shownAt[board] ?? 0
                    s.quietHeld[board] = (parts.map(\.message).filter { $0.visibleAt > since }, nil)
                    continue
                }
                if let quiet, quiet.messages == .hold, !forced, targets[board] != frame {
                    // Quiet hours: the board stays as it is until they end (or a forced message).
                    let since = s.shownAt[board] ?? 0
                    s.quietHeld[board] = (parts.map(\.message).filter { $0.visibleAt > since }, quiet.until)
                    if let until = quiet.until { next = min(next ?? until, until) }
                    continue
                }
                s.quietHeld[board] = nil
                guard s.composed[board] != frame || board == postedBoard else { continue }
                s.composed[board] = frame
                s.shownAt[board] = t
                changed.append((board, frame, ids.filter { !s.saved.displayed.contains($0) }, parts.last?.message))
            }
            return next
        }
        for n in notes { logger.log(level: n.level, n.message, metadata: n.metadata) }
        if advanced { var saved = state.withLock { $0.saved }; write(&saved) }
        var postedShown: Wall.Shown?
        // One instant for every board this refresh moves: a grid's boards play one cascade.
        let start = MonotonicClock.now()
        for c in changed.sorted(by: { $0.board < $1.board }) {
            if let m = c.newest, let fields = m.transition {
                do throws(TransitionFields.Invalid) { _ = try fields.style(over: boards[c.board].transition) } catch {
                    logger.warning("message \(m.id) asks for a transition this board cannot play (\(error.description)); it plays the board's own")
                }
            }
            var style = c.newest.flatMap { Self.style(of: $0, on: boards[c.board], now: t) }
            if let quiet, quiet.messages == .gentle, c.newest?.forced != true { style = TransitionStyle.named("classic", speed: .gentle) }
            var shown = wall.show(frame: c.frame, board: c.board, style: style, start: start)
            if c.board == postedBoard, let part = postedPart {
                shown.cut = part.cut
                shown.substitutions = part.substitutions
                postedShown = shown
            }
            guard !c.ids.isEmpty else { continue }
            settles.continuation.yield(Settle(board: c.board, transition: shown.transition.number, ids: c.ids))
        }
        schedule(next)
        return postedShown
    }

    /// A zone as `/status` reports it: its board (or grid), rows and columns (first, last), and
    /// the message it shows (`until`: when a temporary one ends).
    static func shows(_ zone: Zone, _ message: InboxMessage?, config: FlapdConfig) -> StatusReport.ZoneShows {
        let id = config.boards[zone.board].id
        let on = zone.pieces.isEmpty ? id : config.grids.first { $0.boards.joined().contains(zone.board) }?.id ?? id
        return StatusReport.ZoneShows(board: on, rows: [zone.rows.lowerBound, zone.rows.upperBound - 1],
                                      cols: [zone.cols.lowerBound, zone.cols.upperBound - 1], id: message?.id,
                                      sender: message?.senderName, until: message?.duration == nil ? nil : message?.expiresAt)
    }

    /// The style the newest message of a board asks for (over the board's own), and its landing
    /// instant while that lies ahead: its `arriveAt`, or the unlock instant of a held letter (shown
    /// early by `lead`); nil when it asks for neither.
    package static func style(of message: InboxMessage, on board: BoardConfig, now: Double) -> TransitionStyle? {
        let land = message.arriveAt ?? message.unlockAt
        guard message.transition != nil || land.map({ $0 > now }) == true else { return nil }
        var style = (try? (message.transition ?? TransitionFields()).style(over: board.transition)) ?? board.transition
        // At most 2100's distance (`InboxMessage.instants`), whatever door the message came in by.
        if let at = land, at > now { style.arrival = .at(Int64((min(at - now, InboxMessage.instants.upperBound) * 1e9).rounded())) }
        return style
    }

    /// How early a held letter is shown, in seconds, so that every board can land on it at its
    /// unlock instant: the longest way a module can go (once round its drum), and a second more
    /// for the desk and the conductor to take it.
    static func lead(_ boards: [BoardConfig]) -> Double {
        boards.map { Double($0.drum.count - 1) * Double($0.timing.flip) / 1e9 }.max().map { $0 + 1 } ?? 0
    }

    /// Reports messages displayed once the board settled — unless a later message took the
    /// board first and they are no longer on it.
    private func displayed(_ ids: [String], board: Int, transition: Int) {
        let fresh = state.withLock { s in
            ids.filter { id in s.saved.inbox.live.values.contains { $0.id == id } && s.saved.displayed.insert(id).inserted }
        }
        if !fresh.isEmpty { var saved = state.withLock { $0.saved }; write(&saved) }
        guard !fresh.isEmpty else { return }
        let report = reporter.withLock { $0 }
        for id in fresh {
            logger.info("message displayed", metadata: ["id": "\(id)", "board": "\(wall.config.boards[board].id)"])
            report?(id)
        }
    }

    private func schedule(_ next: Double?) {
        state.withLock { $0.nextWake = $0.stopped ? nil : next }
        clock.ring()
    }

    /// What the mailroom waits for off its desk, as children of this call, until `stop`: the
    /// clock that wakes it for the next unlock, expiry, rotation or end of quiet hours, and each
    /// shown board's settling, after which the messages it shows are reported displayed. At the
    /// stop, a board not yet settled is not waited for: its messages are reported once a later
    /// run has shown them (and what it had reported, again: `reportAgain`).
    public func run() async {
        showsReporter.withLock { $0 }?(wall.localCodes())
        await withDiscardingTaskGroup { group in
            group.addTask { await self.keepTime() }
            for await settle in settles.stream {
                group.addTask {
                    await self.settled(settle.board, settle.transition)
                    guard !Task.isCancelled else { return }
                    await self.onDesk { self.displayed(settle.ids, board: settle.board, transition: settle.transition) }
                    // What the board shows (the Cloud API's read) changes only with the local API's boards.
                    if self.wall.isLocal(board: settle.board) { self.showsReporter.withLock { $0 }?(self.wall.localCodes()) }
                }
            }
            group.cancelAll()
        }
    }

    /// Refreshes whenever `nextWake` comes, until cancelled.
    private func keepTime() async {
        while !Task.isCancelled {
            let next = state.withLock { $0.nextWake }
            await clock.wait(seconds: next.map { $0 - now() + 0.001 })
            guard !Task.isCancelled else { return }
            if let due = state.withLock({ $0.nextWake }), due <= now() { await refresh() }
        }
    }

    /// Writes `saved`, its reported ids pruned to messages still in the inbox. On the desk.
    private func write(_ saved: inout InboxStore.Saved) {
        let inbox = saved.inbox
        saved.displayed = saved.displayed.filter { inbox.contains(id: $0) }
        guard let store else { return }
        do { try store.save(saved) } catch { logger.error("cannot save the inbox: \(error)") }
    }

    /// Stops showing: once every change given before has run, the timer is cancelled and later
    /// changes are saved but not shown (the outputs are stopping; they show after a restart).
    public func stop() async {
        await onDesk {
            self.state.withLock { s in
                s.stopped = true
                s.nextWake = nil
            }
        }
        settles.continuation.finish()
        clock.ring()
    }

    /// Whether `stop` has run.
    public var isStopped: Bool { state.withLock { $0.stopped } }
}
