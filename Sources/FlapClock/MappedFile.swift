#if canImport(Glibc)
import Glibc
#endif

/// A file of a fixed length mapped shared into memory, for journals that a timing thread stores
/// into: a store is no system call and no allocation, the kernel keeps the pages when the
/// process is killed, and `flush` writes them to disk (against a power cut; not on a timing
/// thread). The mapping lives as long as this object.
/// (`@unchecked Sendable`: the mapping itself never changes; who may load and store through
/// `base` is each journal's own rule.)
public final class MappedFile: @unchecked Sendable {
    /// The first byte of the mapping; `length` bytes may be loaded and stored from it.
    public let base: UnsafeMutableRawPointer
    public let length: Int
    /// Whether the file had another length before it was opened: new, or written for something
    /// else. Its bytes then say nothing.
    public let wasResized: Bool

    /// Opens (or creates, mode 0600) the file at `path`, sized to `length`; nil when it cannot be
    /// opened, sized or mapped.
    public init?(path: String, length: Int) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        let before = fstat(fd, &st) == 0 ? Int(st.st_size) : -1
        guard ftruncate(fd, off_t(length)) == 0,
              let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else { return nil }
        base = p
        self.length = length
        wasResized = before != length
    }

    deinit { munmap(base, length) }

    /// Whether the file begins with these bytes.
    public func begins(with bytes: [UInt8]) -> Bool {
        bytes.count <= length && bytes.indices.allSatisfy { base.load(fromByteOffset: $0, as: UInt8.self) == bytes[$0] }
    }

    /// Writes these bytes at the start of the file.
    public func write(atStart bytes: [UInt8]) {
        for (i, b) in bytes.prefix(length).enumerated() { base.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
    }

    /// Writes the mapped pages to disk.
    public func flush() { msync(base, length, MS_SYNC) }
}
