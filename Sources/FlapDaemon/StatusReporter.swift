import FlapCore
import FlapTerminal

/// Tells systemd what each board shows (`STATUS=`) whenever a board settles.
final class StatusReporter: ModuleDriver {
    private let notifier: SystemdNotifier
    private let boardIDs: [String]

    init(notifier: SystemdNotifier, boardIDs: [String]) {
        self.notifier = notifier
        self.boardIDs = boardIDs
    }

    func flip(_ event: FlipEvent) {}

    func settled(board: Int, transition: Int, frame: Frame) {
        notifier.send("STATUS=\(boardIDs[board]) shows \(Self.summary(frame))")
    }

    /// The non-blank rows of a frame, trimmed, joined by " / " (chips as their letters).
    static func summary(_ frame: Frame) -> String {
        let rows = PlainFrame.rows(frame).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return rows.isEmpty ? "a blank board" : "\"" + rows.joined(separator: " / ") + "\""
    }
}
