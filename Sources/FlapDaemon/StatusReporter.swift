import Dispatch
import FlapCore
import FlapBoard
import FlapTerminal
import Synchronization

/// Tells systemd (`STATUS=`) what every board shows, or is moving to, in one line of at most
/// `maxBytes` — systemd drops a notify datagram of 4096 bytes or more, and `systemctl status`
/// shows one line. The line is read from the status model (`StatusReport.Board`, what `/status`
/// sends) whenever a board takes a new target or settles, with `READY=1` at start and after a
/// reload, and at a stop, where a board left short of its target is said to be part-way.
/// Built and sent on a queue of its own, never on the conductor's thread; sent only when it
/// changed (`READY=1` and `STOPPING=1` always).
final class StatusReporter: FlipObserver {
    static let maxBytes = 1000

    private struct State {
        var boards: (@Sendable () -> [StatusReport.Board])?
        var stopping = false
        /// Said before the boards until it no longer holds (a refused reload).
        var note: String?
        var last: String?
    }

    private let notifier: SystemdNotifier
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "flapd-status-line")

    init(notifier: SystemdNotifier) {
        self.notifier = notifier
    }

    /// Where the boards are read from (the daemon's status; set once the wall exists).
    func read(from boards: @escaping @Sendable () -> [StatusReport.Board]) {
        state.withLock { $0.boards = boards }
    }

    func flip(_ event: FlipEvent) {}

    func settled(board: Int, transition: Int, frame: Frame) { send() }

    /// A board took a new target.
    func moving() { send() }

    /// `READY=1` with the line (at start, and after a reload; `refused` names a refused config,
    /// said until a reload succeeds).
    func ready(refused: String? = nil) {
        send(head: "READY=1") { $0.note = refused.map { "reload refused (\($0) has problems)" } }
    }

    /// `STOPPING=1`: from now on a board that settles short of its target is said to be part-way.
    func stopping() { send(head: "STOPPING=1") { $0.stopping = true } }

    /// The boards where the outputs left them once stopped (`STOPPING=1` was said when the board
    /// began to stop: said again only if nothing said it); returns once it is sent.
    func stopped() {
        let said = state.withLock { $0.stopping }
        if said { send { _ in } } else { stopping() }
        queue.sync {}
    }

    /// Reads the boards and sends the line (after `change`), on the queue.
    private func send(head: String? = nil, _ change: @escaping @Sendable (inout State) -> Void = { _ in }) {
        queue.async { [self] in
            let (boards, s) = state.withLock { s in
                change(&s)
                return (s.boards, s)
            }
            guard let boards else { return }
            let line = Self.line(boards(), stopping: s.stopping, note: s.note)
            let changed = state.withLock { s in
                defer { s.last = line }
                return s.last != line
            }
            if let head {
                notifier.send("\(head)\nSTATUS=\(line)")
            } else if changed {
                notifier.send("STATUS=\(line)")
            }
        }
    }

    /// The line: `[note: ][stopping: |stopped: ]id shows "…"; id moving to "…"`, each board's
    /// text cut (with "…") to share `maxBytes`. A board short of its target is moving to it —
    /// or, once stopping and still, part-way there.
    static func line(_ boards: [StatusReport.Board], stopping: Bool, note: String?) -> String {
        var prefix = note.map { $0 + ": " } ?? ""
        if stopping { prefix += boards.contains(where: \.moving) ? "stopping: " : "stopped: " }
        let parts: [(head: String, texts: [String])] = boards.map { b in
            let shows = summary(b.shows)
            let target = (try? Frame(codes: b.target, rows: b.rows, cols: b.cols)).map { summary(PlainFrame.rows($0)) } ?? shows
            if target == shows { return ("\(b.id) shows ", [shows]) }
            if stopping && !b.moving { return ("\(b.id) part-way to ", [target, shows]) }
            return ("\(b.id) moving to ", [target])
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

    /// The non-blank rows of a board, trimmed, joined by " / " (chips as their letters), quoted.
    static func summary(_ rows: [String]) -> String {
        let rows = rows.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return rows.isEmpty ? "a blank board" : "\"" + rows.joined(separator: " / ") + "\""
    }
}
