import FlapCore
import FlapNet
import Foundation
import Logging
import Synchronization

/// Messages from the message API onto the wall: keeps the inbox, routes each sender to its
/// zones, composes each board's frame from its zones and shows it when it changes; wakes for
/// unlocks, expiries and rotation; reports a message displayed once its board has settled.
public final class Mailroom: Sendable {
    private struct State {
        var saved = InboxStore.Saved()
        var router: SenderRouter
        var cursors: [ZoneCursor]
        /// Per board: the frame last composed.
        var composed: [Int: Frame] = [:]
        var unrouted: Set<String> = []
        var wake: Task<Void, Never>?
    }

    private let wall: Wall
    private let store: InboxStore?
    private let logger: Logger
    private let now: @Sendable () -> Double
    private let settled: @Sendable (_ board: Int, _ transition: Int) async -> Void
    private let state: Mutex<State>
    /// Held by every change of the inbox and its write to disk, so saves take turns (the newest
    /// lands last) and a message counts in `inbox` (so in `/status`) only once the file holds it.
    private let writing = NSLock()
    private let reporter = Mutex<(@Sendable (String) -> Void)?>(nil)

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

    /// Where `message.displayed` reports go (the API client).
    public func reportDisplayed(to report: @escaping @Sendable (String) -> Void) { reporter.withLock { $0 = report } }

    /// Takes the saved inbox back and shows it. The boards' own saved state is restored first,
    /// so a board whose messages have not changed does not move.
    public func restore() {
        guard let store else { return }
        do {
            let saved = try store.load()
            writing.withLock { state.withLock { s in
                s.saved = saved
                for b in Set(s.router.zones.map(\.board)) { s.composed[b] = wall.target(board: b) }
            } }
            logger.info("inbox restored", metadata: ["senders": "\(saved.inbox.live.count)", "held": "\(saved.inbox.held.count)"])
        } catch {
            logger.error("cannot read the saved inbox \(store.file): \(error); starting empty")
        }
        refresh()
    }

    /// Applies one event of the API client: saved first, then counted and shown — a message
    /// the board shows, or holds for later, survives a kill from then on (the API cannot be
    /// counted on to bring it back: it may be unreachable after the restart).
    public func take(_ event: MessageAPIClient.Event) {
        let t = now()
        writing.withLock {
            var next = state.withLock { $0.saved }
            switch event {
            case .caughtUp(let messages):
                next.inbox.sync(with: messages, now: t)
            case .new(let m):
                let outcome = next.inbox.receive(m, now: t)
                let nowhere = (outcome == .shown || outcome == .held) && state.withLock { $0.router.zones(for: m).isEmpty }
                logger.info(nowhere ? "message not shown: its sender is in no zone" : "message \(outcome)",
                            metadata: ["id": "\(m.id)", "sender": "\(m.senderName)"])
            case .deleted(let id):
                next.inbox.delete(id: id, now: t)
            }
            write(&next)
            state.withLock { $0.saved = next }
        }
        refresh()
    }

    /// Re-routes after a config reload; no message is lost (the inbox stays).
    public func reroute(_ zones: [Zone]) {
        state.withLock { s in
            s.router = SenderRouter(zones: zones)
            s.cursors = zones.map { _ in ZoneCursor() }
        }
        refresh()
    }

    /// The inbox as it stands.
    public var inbox: Inbox { state.withLock { $0.saved.inbox } }

    /// Composes every zoned board and shows the boards whose frame changed.
    public func refresh() {
        writing.lock()
        defer { writing.unlock() }
        let t = now()
        let boards = wall.config.boards
        var changed: [(board: Int, frame: Frame, ids: [String])] = []
        var advanced = false
        let next: Double? = state.withLock { s in
            advanced = s.saved.inbox.advance(now: t)
            let visible = s.saved.inbox.visible
            var routes: [Int: [InboxMessage]] = [:]
            for m in visible {
                let zones = s.router.zones(for: m)
                if zones.isEmpty, s.unrouted.insert(m.senderID).inserted {
                    logger.notice("sender is in no zone; its messages are not shown", metadata: ["sender": "\(m.senderName)", "id": "\(m.senderID)"])
                }
                for z in zones { routes[z, default: []].append(m) }
            }
            var frames: [Int: (Frame, [String])] = [:]
            var next = s.saved.inbox.nextChange
            for (i, zone) in s.router.zones.enumerated() where zone.board < boards.count {
                let b = boards[zone.board]
                let (message, rotate) = s.cursors[i].pick(routes[i] ?? [], rotateSeconds: zone.rotateSeconds, now: t)
                if let rotate { next = min(next ?? rotate, rotate) }
                let part = Composer().compose(message, in: zone, mapper: b.mapper)
                if let problem = part.problem { logger.warning("message \(message?.id ?? "?") not shown: \(problem)") }
                if !part.cut.isEmpty {
                    logger.warning("message did not fit its zone and was cut", metadata: ["id": "\(message?.id ?? "")", "cut": "\(part.cut.joined(separator: " / "))"])
                }
                var (frame, ids) = frames[zone.board] ?? (Frame(rows: b.rows, cols: b.cols, filledWith: b.drum.glyphs[0]), [])
                frame.paste(part.frame, row: zone.rows.lowerBound, col: zone.cols.lowerBound)
                if let message, part.problem == nil { ids.append(message.id) }
                frames[zone.board] = (frame, ids)
            }
            for (board, (frame, ids)) in frames.sorted(by: { $0.key < $1.key }) where s.composed[board] != frame {
                s.composed[board] = frame
                changed.append((board, frame, ids.filter { !s.saved.displayed.contains($0) }))
            }
            return next
        }
        if advanced { var saved = state.withLock { $0.saved }; write(&saved) }
        for c in changed {
            let shown = wall.show(frame: c.frame, board: c.board)
            guard !c.ids.isEmpty else { continue }
            Task {
                await settled(c.board, shown.transition.number)
                displayed(c.ids, board: c.board, transition: shown.transition.number)
            }
        }
        schedule(next)
    }

    /// Reports messages displayed once the board settled — unless a later message took the
    /// board first and they are no longer on it.
    private func displayed(_ ids: [String], board: Int, transition: Int) {
        let fresh = writing.withLock {
            let fresh = state.withLock { s in
                ids.filter { id in s.saved.inbox.live.values.contains { $0.id == id } && s.saved.displayed.insert(id).inserted }
            }
            if !fresh.isEmpty { var saved = state.withLock { $0.saved }; write(&saved) }
            return fresh
        }
        guard !fresh.isEmpty else { return }
        let report = reporter.withLock { $0 }
        for id in fresh {
            logger.info("message displayed", metadata: ["id": "\(id)", "board": "\(wall.config.boards[board].id)"])
            report?(id)
        }
    }

    private func schedule(_ next: Double?) {
        let task: Task<Void, Never>? = next.map { at in
            let delay = max(0, at - now()) + 0.001
            return Task { [weak self] in
                guard (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
                self?.refresh()
            }
        }
        state.withLock { s in
            s.wake?.cancel()
            s.wake = task
        }
    }

    /// Writes `saved`, its reported ids pruned to messages still in the inbox. Caller holds
    /// `writing`.
    private func write(_ saved: inout InboxStore.Saved) {
        let inbox = saved.inbox
        saved.displayed = saved.displayed.filter { inbox.contains(id: $0) }
        guard let store else { return }
        do { try store.save(saved) } catch { logger.error("cannot save the inbox: \(error)") }
    }

    /// Stops the timer.
    public func stop() { state.withLock { $0.wake?.cancel() } }
}
