#if canImport(Glibc)
import Glibc
#endif
import FlapCore
import Foundation

/// Every module's flap, as of its last fired flip, in a memory-mapped file (`positions.bin`):
/// the conductor's thread stores one byte per flip — no system call, no allocation — so a process
/// killed at any instant leaves each module's position right to within the flip in progress.
/// (The kernel keeps the mapped pages after a kill; against a power cut, `sync()` flushes them
/// with the state file.) Layout: "FLAPPOS1", then per board its rows × cols Vestaboard codes.
final class PositionJournal: ModuleDriver, @unchecked Sendable {
    private static let magic = Array("FLAPPOS1".utf8)
    private let base: UnsafeMutablePointer<UInt8>
    private let length: Int
    private let offsets: [Int]
    private let cols: [Int]

    /// Opens (or creates) the journal for boards of these sizes; nil when it cannot be mapped.
    init?(directory: String, sizes: [(rows: Int, cols: Int)]) {
        var offsets: [Int] = []
        var at = Self.magic.count
        for s in sizes { offsets.append(at); at += s.rows * s.cols }
        let path = directory + "/positions.bin"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        fstat(fd, &st)
        let fresh = Int(st.st_size) != at
        guard ftruncate(fd, off_t(at)) == 0,
              let p = mmap(nil, at, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else { return nil }
        base = p.assumingMemoryBound(to: UInt8.self)
        length = at
        self.offsets = offsets
        cols = sizes.map(\.cols)
        if fresh || !(0..<Self.magic.count).allSatisfy({ base[$0] == Self.magic[$0] }) {
            // A new journal, or one for other boards: it says nothing yet.
            memset(base, 0, at)
        }
    }

    deinit { munmap(base, length) }

    /// Whether the journal holds positions (it was written by a run with these boards).
    var isValid: Bool { (0..<Self.magic.count).allSatisfy { base[$0] == Self.magic[$0] } }

    /// Marks the journal as holding the positions written from now on (call once they are set).
    func seal() { for (i, b) in Self.magic.enumerated() { base[i] = b } }

    /// The codes of a board's modules, row-major.
    func positions(board: Int, count: Int) -> [Int] { (0..<count).map { Int(base[offsets[board] + $0]) } }

    /// Writes a board's codes (at start, from the restored state).
    func set(board: Int, codes: [Int]) {
        for (i, c) in codes.enumerated() { base[offsets[board] + i] = UInt8(c) }
    }

    func flip(_ event: FlipEvent) {
        base[offsets[event.board] + event.row * cols[event.board] + event.col] = event.glyph.code
    }

    func settled(board: Int, transition: Int, frame: Frame) {}

    /// Flushes the mapped pages to disk (with the state file; not on the real-time path).
    func flush() { msync(base, length, MS_SYNC) }
}
