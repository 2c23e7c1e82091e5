import FlapCore
import FlapTerminal
import Synchronization

/// Tells systemd (`STATUS=`) what every board shows, or is moving to, in one line of at most
/// `maxBytes` — systemd drops a notify datagram of 4096 bytes or more, and `systemctl status`
/// shows one line. Sent when a board starts moving, when it settles, with `READY=1` at start and
/// after a reload, and at a stop, where a board left part-way says so rather than "shows".
final class StatusReporter: FlipObserver {
    /// What one board is doing, as the line says it.
    enum Board: Equatable {
        case shows(Frame)
        case moving(to: Frame)
        /// Stopped before it reached `target`.
        case partWay(to: Frame, shows: Frame)
    }

    static let maxBytes = 1000

    private struct State {
        var boards: [Board]
        var stopping = false
        /// Said before the boards until it no longer holds (a refused reload).
        var note: String?
    }

    private let notifier: SystemdNotifier
    private let boardIDs: [String]
    private let state: Mutex<State>

    /// `blank`: each board's blank frame, what it shows until `begin` says otherwise.
    init(notifier: SystemdNotifier, boardIDs: [String], blank: [Frame]) {
        self.notifier = notifier
        self.boardIDs = boardIDs
        state = Mutex(State(boards: blank.map { .shows($0) }))
    }

    /// Each board's restored target, what it shows unless it moves (call before `resume`).
    func begin(with targets: [Frame]) {
        state.withLock { s in s.boards = targets.map { .shows($0) } }
    }

    func flip(_ event: FlipEvent) {}

    func settled(board: Int, transition: Int, frame: Frame) {
        update { s in
            if s.stopping, case .moving(let to) = s.boards[board], to != frame {
                s.boards[board] = .partWay(to: to, shows: frame)
            } else {
                s.boards[board] = .shows(frame)
            }
            return true
        }
    }

    /// A board took a new target (after planning: one that needs no flip has settled already).
    func moving(board: Int, to frame: Frame) {
        update { s in
            guard s.boards[board] != .shows(frame) else { return false }
            s.boards[board] = .moving(to: frame)
            return true
        }
    }

    /// `READY=1` with the line (at start, and after a reload; `refused` names a refused config,
    /// said until a reload succeeds).
    func ready(refused: String? = nil) {
        let line = state.withLock { s in
            s.note = refused.map { "reload refused (\($0) has problems)" }
            return Self.line(s, ids: boardIDs)
        }
        notifier.send("READY=1\nSTATUS=\(line)")
    }

    /// `STOPPING=1`: from now on a board that settles short of its target is said to be part-way.
    func stopping() {
        let line = state.withLock { s in
            s.stopping = true
            return Self.line(s, ids: boardIDs)
        }
        notifier.send("STOPPING=1\nSTATUS=\(line)")
    }

    /// The boards where the outputs left them once stopped: a board short of its target is
    /// said to be part-way there.
    func stopped(shows frames: [Frame]) {
        update { s in
            s.stopping = true
            for (b, frame) in frames.enumerated() where b < s.boards.count {
                switch s.boards[b] {
                case .moving(let to) where to != frame, .partWay(let to, _) where to != frame: s.boards[b] = .partWay(to: to, shows: frame)
                default: s.boards[b] = .shows(frame)
                }
            }
            return true
        }
    }

    /// Applies `change`; sends the line when it says something changed.
    private func update(_ change: (inout State) -> Bool) {
        let line: String? = state.withLock { s in change(&s) ? Self.line(s, ids: boardIDs) : nil }
        if let line { notifier.send("STATUS=\(line)") }
    }

    /// The line: `[note: ][stopping: |stopped: ]id shows "…"; id moving to "…"`, each board's
    /// text cut (with "…") to share `maxBytes`.
    private static func line(_ s: State, ids: [String]) -> String {
        let settled = s.boards.allSatisfy { if case .moving = $0 { false } else { true } }
        var prefix = s.note.map { $0 + ": " } ?? ""
        if s.stopping { prefix += settled ? "stopped: " : "stopping: " }
        let parts: [(head: String, texts: [String])] = zip(ids, s.boards).map { id, board in
            switch board {
            case .shows(let f): ("\(id) shows ", [summary(f)])
            case .moving(let to): ("\(id) moving to ", [summary(to)])
            case .partWay(let to, let shown): ("\(id) part-way to ", [summary(to), summary(shown)])
            }
        }
        func render(_ budget: Int?) -> String {
            prefix + parts.map { p in
                let texts = p.texts.map { t in budget.map { cut(t, toBytes: $0) } ?? t }
                return p.head + texts[0] + (texts.count > 1 ? " (shows \(texts[1]))" : "")
            }.joined(separator: "; ")
        }
        let whole = render(nil)
        if whole.utf8.count <= maxBytes { return whole }
        let texts = parts.reduce(0) { $0 + $1.texts.count }
        let fixed = render(0).utf8.count
        let each = max(8, (maxBytes - fixed) / max(1, texts))
        return cut(render(each), toBytes: maxBytes)
    }

    /// `text` cut to at most `bytes` of UTF-8, ending with "…" when cut.
    static func cut(_ text: String, toBytes bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var out = ""
        for ch in text {
            if out.utf8.count + ch.utf8.count + 3 > bytes { break }
            out.append(ch)
        }
        return out + "…"
    }

    /// The non-blank rows of a frame, trimmed, joined by " / " (chips as their letters), quoted.
    static func summary(_ frame: Frame) -> String {
        let rows = PlainFrame.rows(frame).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return rows.isEmpty ? "a blank board" : "\"" + rows.joined(separator: " / ") + "\""
    }
}
