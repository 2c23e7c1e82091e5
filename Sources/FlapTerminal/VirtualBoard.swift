#if canImport(Glibc)
import Glibc
#endif
import FlapCore
import FlapClock

/// The virtual boards on a terminal: a `FlipObserver` that shows boards of the conductor.
///
/// `.live` draws the boards in place, one under the other, with ANSI colours, and shows every
/// flip at its instant; logs scroll below them. `.plain` prints a text frame (`PlainFrame`) each
/// time a board settles, after a `[id]` line when there is more than one board. Writing happens
/// on a thread of its own, never on the conductor's.
public final class VirtualBoard: FlipObserver {
    public enum Style: Sendable { case live, plain }

    /// One board to show: its index in the conductor, its size and its name.
    public struct Shown: Sendable {
        public var board: Int
        public var rows: Int
        public var cols: Int
        public var id: String
        /// Code 62 drawn ❤ (a Note).
        public var heart: Bool
        public init(board: Int, rows: Int, cols: Int, id: String, heart: Bool = false) {
            self.board = board; self.rows = rows; self.cols = cols; self.id = id; self.heart = heart
        }
    }

    private enum Output: Sendable {
        case text(String)
        case cell(Int, Glyph, row: Int, col: Int)
        case settled(Int, Frame)
    }

    private let style: Style
    private let queue: OutputQueue<Output>
    /// The screen layout of each shown board, by conductor index.
    private let screens: [Int: ANSIBoard]
    private let reserved: Int

    /// Shows these boards on file descriptor `fd` (stdout by default).
    public init(_ shown: [Shown], style: Style, fd: Int32 = 1) {
        self.style = style
        var screens: [Int: ANSIBoard] = [:]
        var line = 0
        for s in shown {
            screens[s.board] = ANSIBoard(rows: s.rows, cols: s.cols, top: line, heart: s.heart)
            line += s.rows + 2
        }
        self.screens = screens
        self.reserved = line
        let hearts = Set(shown.filter(\.heart).map(\.board))
        let labels = shown.count > 1 ? Dictionary(uniqueKeysWithValues: shown.map { ($0.board, "[\($0.id)]\n") }) : [:]
        queue = OutputQueue(name: "virtual-board") { [screens, hearts] items in
            var out = ""
            for item in items {
                switch item {
                case .text(let s): out += s
                case .cell(let b, let g, let r, let c): out += screens[b]?.cell(g, row: r, col: c) ?? ""
                case .settled(let b, let f): out += (labels[b] ?? "") + PlainFrame.render(f, heart: hearts.contains(b))
                }
            }
            FileOutput.write(out, to: fd)
        }
        if style == .live {
            var out = ANSIBoard.reserve(line, terminalHeight: FileOutput.terminalHeight(fd))
            for s in shown { out += screens[s.board]!.draw(Frame(rows: s.rows, cols: s.cols)) }
            // Drawn before anything else runs, so that no log line is cleared away.
            FileOutput.write(out + "\u{1B}[\(line + 1);1H", to: fd)
        }
    }

    /// Whether a file descriptor is a terminal that can show the live board.
    public static func isTerminal(_ fd: Int32 = 1) -> Bool { isatty(fd) == 1 }

    public func flip(_ event: FlipEvent) {
        guard style == .live, screens[event.board] != nil else { return }
        queue.push(.cell(event.board, event.glyph, row: event.row, col: event.col))
    }

    public func settled(board: Int, transition: Int, frame: Frame) {
        guard style == .plain, screens[board] != nil else { return }
        queue.push(.settled(board, frame))
    }

    /// Writes what is queued and gives the terminal back.
    public func finish() {
        if style == .live { queue.push(.text(ANSIBoard.release(reserved))) }
        queue.close()
    }
}
