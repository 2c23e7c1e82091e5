#if canImport(Glibc)
import Glibc
#endif
import FlapCore
import FlapClock
import Foundation

/// How many flips every module has made, so that wear can be seen (`/status`, `/metrics`). The
/// conductor's thread adds one per fired flip (a homing turn's landing: the flaps it passed) — no system call, no allocation — to a counter of
/// the module's own. With a state folder the counters live in a memory-mapped file
/// (`flips.bin`: "FLAPCNT1", then per board its rows × cols counts, 64-bit), flushed with the
/// state file, so they add up across restarts; without one they count from this start. Each
/// count is a `SharedCounter`: a reader on another thread may see it one flip behind, never torn.
/// (`@unchecked Sendable`: the pointer is only ever reached through `SharedCounter`.)
public final class FlipCounter: FlipObserver, @unchecked Sendable {
    private static let magic = Array("FLAPCNT1".utf8)
    private let file: MappedFile?
    private let base: UnsafeMutablePointer<UInt64>
    private let offsets: [Int]
    private let sizes: [(rows: Int, cols: Int)]

    /// Counters for boards of these sizes, kept in `directory` when given (and mappable).
    public init(directory: String?, sizes: [(rows: Int, cols: Int)]) {
        var offsets: [Int] = []
        var count = 1  // the magic's slot
        for s in sizes { offsets.append(count); count += s.rows * s.cols }
        self.offsets = offsets
        self.sizes = sizes
        if let directory {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        if let directory, let file = MappedFile(path: directory + "/flips.bin", length: count * 8) {
            self.file = file
            base = file.base.assumingMemoryBound(to: UInt64.self)
            if file.wasResized || !file.begins(with: Self.magic) {
                // New, or kept for other boards: count from zero.
                memset(base, 0, count * 8)
                file.write(atStart: Self.magic)
            }
        } else {
            file = nil
            base = .allocate(capacity: count)
            base.initialize(repeating: 0, count: count)
        }
    }

    deinit { if file == nil { base.deallocate() } }

    /// Whether the counts are kept across restarts.
    public var isKept: Bool { file != nil }

    public func flip(_ event: FlipEvent) {
        guard offsets.indices.contains(event.board) else { return }
        SharedCounter.add(UInt64(max(0, event.flaps)), to: base + offsets[event.board] + event.row * sizes[event.board].cols + event.col)
    }

    public func settled(board: Int, transition: Int, frame: Frame) {}

    /// A board's counts, row by row.
    public func counts(board: Int) -> [[Int]] {
        guard offsets.indices.contains(board) else { return [] }
        let s = sizes[board]
        return (0..<s.rows).map { r in (0..<s.cols).map { c in Int(SharedCounter.load(base + offsets[board] + r * s.cols + c)) } }
    }

    /// Writes the counters to disk (with the state file; not on the real-time path).
    public func flush() { file?.flush() }
}
