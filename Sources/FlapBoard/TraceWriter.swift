import FlapCore
import FlapClock
import FlapTiming
import Foundation

/// Writes one JSON line per fired flip — its board, module, glyph, planned and actual instants
/// (milliseconds from its transition's start) and lateness; a homing turn's landing adds
/// `"homed":true` and the flaps it passed — from a thread of its own.
public final class TraceWriter: FlipObserver {
    private let queue: OutputQueue<FlipEvent>
    /// The file written (nil when tracing to stderr), closed by `finish`.
    private let file: Int32?

    /// Traces to a file (created or truncated), or to stderr for `-`.
    public init(path: String, boardIDs: [String]) throws {
        let fd: Int32
        if path == "-" { fd = 2 } else {
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            if fd < 0 { throw TraceError(path: path, reason: String(cString: strerror(errno))) }
        }
        file = path == "-" ? nil : fd
        queue = OutputQueue(name: "trace") { events in
            var out = ""
            for e in events { out += TraceWriter.line(e, boardID: boardIDs[e.board]) + "\n" }
            FileOutput.write(out, to: fd)
        }
    }

    static func line(_ e: FlipEvent, boardID: String) -> String {
        let ms = { (t: Int64) in String(format: "%.3f", Double(t - e.transitionStart) / 1e6) }
        let glyph = e.glyph.text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "{\"board\":\"\(boardID)\",\"transition\":\(e.transition),\"row\":\(e.row),\"col\":\(e.col),"
            + "\"flip\":\(e.flip),\"glyph\":\"\(glyph)\",\"planned_ms\":\(ms(e.planned)),"
            + "\"actual_ms\":\(ms(e.actual)),\"late_us\":\((e.actual - e.planned) / 1000),\"actual_ns\":\(e.actual)"
            + (e.homed ? ",\"homed\":true,\"flaps\":\(e.flaps)}" : "}")
    }

    public func flip(_ event: FlipEvent) { queue.push(event) }
    public func settled(board: Int, transition: Int, frame: Frame) {}

    /// Writes what is queued.
    public func finish() {
        queue.close()
        if let file { close(file) }
    }
}

public struct TraceError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot write the trace to \(path): \(reason)" }
}
