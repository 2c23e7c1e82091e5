#if canImport(Glibc)
import Glibc
#endif
import FlapCore
import FlapTiming

/// The virtual board on a terminal: a `ModuleDriver` that shows one board of the conductor.
///
/// `.live` draws the board in place with ANSI colours and shows every flip at its instant;
/// `.plain` prints a text frame (`PlainFrame`) each time the board settles. Writing happens on a
/// thread of its own, never on the conductor's.
public final class VirtualBoard: ModuleDriver {
    public enum Style: Sendable { case live, plain }

    private enum Output: Sendable {
        case text(String)
        case cell(Glyph, row: Int, col: Int)
        case settled(Frame)
    }

    private let board: Int
    private let style: Style
    private let queue: OutputQueue<Output>
    private let ansi: ANSIBoard

    /// A virtual board for conductor board `board`, writing to file descriptor `fd`.
    public init(board: Int, rows: Int, cols: Int, style: Style, fd: Int32 = 1) {
        self.board = board
        self.style = style
        let ansi = ANSIBoard(rows: rows, cols: cols)
        self.ansi = ansi
        queue = OutputQueue(name: "virtual-board") { items in
            var out = ""
            for item in items {
                switch item {
                case .text(let s): out += s
                case .cell(let g, let r, let c): out += ansi.cell(g, row: r, col: c)
                case .settled(let f): out += PlainFrame.render(f)
                }
            }
            FileOutput.write(out, to: fd)
        }
        if style == .live {
            queue.push(.text(ansi.setUp(Frame(rows: rows, cols: cols), terminalHeight: FileOutput.terminalHeight(fd))))
        }
    }

    /// Whether a file descriptor is a terminal that can show the live board.
    public static func isTerminal(_ fd: Int32 = 1) -> Bool { isatty(fd) == 1 }

    public func flip(_ event: FlipEvent) {
        guard style == .live, event.board == board else { return }
        queue.push(.cell(event.glyph, row: event.row, col: event.col))
    }

    public func settled(board: Int, transition: Int, frame: Frame) {
        guard style == .plain, board == self.board else { return }
        queue.push(.settled(frame))
    }

    /// Writes what is queued and gives the terminal back.
    public func finish() {
        if style == .live { queue.push(.text(ansi.tearDown())) }
        queue.close()
    }
}

/// Blocking writes of whole strings to a file descriptor.
public enum FileOutput {
    public static func write(_ s: String, to fd: Int32) {
        var bytes = Array(s.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }

    static func terminalHeight(_ fd: Int32) -> Int {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return 24 }
        return Int(size.ws_row)
    }
}
