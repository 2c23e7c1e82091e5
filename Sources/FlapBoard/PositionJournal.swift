#if canImport(Glibc)
import Glibc
#endif
import FlapCore
import FlapClock
import FlapTiming
import Foundation

/// Every module's flap, as of its last fired flip, in a memory-mapped file (`positions.bin`):
/// the conductor's thread stores one byte per flip — no system call, no allocation — so a process
/// killed at any instant leaves each module's position right to within the flip in progress.
/// (The kernel keeps the mapped pages after a kill; against a power cut, `sync()` flushes them
/// with the state file.) Layout: "FLAPPOS1", then per board its rows × cols Vestaboard codes.
/// A board whose modules move by themselves to what they are sent (a splitflap display, flapbus
/// controllers, Krone or Omega modules) is journaled by its output as each target goes out, not
/// by the flips.
/// (`@unchecked Sendable`: each byte has one writer at a time — the conductor's thread for a
/// flipped board, a board's output thread for `sent` — and `positions` is read at the start,
/// before either runs.)
package final class PositionJournal: FlipObserver, @unchecked Sendable {
    private static let magic = Array("FLAPPOS1".utf8)
    private let file: MappedFile
    private let base: UnsafeMutablePointer<UInt8>
    private let offsets: [Int]
    private let cols: [Int]
    private let keptByOutputs: Set<Int>

    /// Opens (or creates) the journal for boards of these sizes, those in `keptByOutputs`
    /// written by `sent` alone; nil when it cannot be mapped.
    package init?(directory: String, sizes: [(rows: Int, cols: Int)], keptByOutputs: Set<Int> = []) {
        var offsets: [Int] = []
        var at = Self.magic.count
        for s in sizes { offsets.append(at); at += s.rows * s.cols }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let file = MappedFile(path: directory + "/positions.bin", length: at) else { return nil }
        self.file = file
        base = file.base.assumingMemoryBound(to: UInt8.self)
        self.offsets = offsets
        cols = sizes.map(\.cols)
        self.keptByOutputs = keptByOutputs
        if file.wasResized || !file.begins(with: Self.magic) {
            // A new journal, or one for other boards: it says nothing yet.
            memset(base, 0, at)
        }
    }

    /// Whether the journal holds positions (it was written by a run with these boards).
    package var isValid: Bool { file.begins(with: Self.magic) }

    /// Marks the journal as holding the positions written from now on (call once they are set).
    package func seal() { file.write(atStart: Self.magic) }

    /// The codes of a board's modules, row-major.
    package func positions(board: Int, count: Int) -> [Int] { (0..<count).map { Int(base[offsets[board] + $0]) } }

    /// Writes a board's codes (at start, from the restored state).
    package func set(board: Int, codes: [Int]) {
        for (i, c) in codes.enumerated() { base[offsets[board] + i] = UInt8(c) }
    }

    /// A module of a board kept by its output was sent the flap of `code` (row-major `module`).
    package func sent(board: Int, module: Int, code: UInt8) {
        base[offsets[board] + module] = code
    }

    package func flip(_ event: FlipEvent) {
        guard !keptByOutputs.contains(event.board) else { return }
        base[offsets[event.board] + event.row * cols[event.board] + event.col] = event.glyph.code
    }

    package func settled(board: Int, transition: Int, frame: Frame) {}

    /// Flushes the mapped pages to disk (with the state file; not on the real-time path).
    func flush() { file.flush() }
}
