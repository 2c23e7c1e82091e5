#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file whoever wrote it, within a size limit: at most one byte past `maxBytes` is ever
/// read, so a file of any size (a sparse file of 100 GiB, a device) costs no more than the limit.
/// The state files, a source's kept value, calibration offsets, flaphub's config and the secret
/// files are read through here (flapd's config reads its own first byte past the limit, to name
/// the line where the file passes it).
public enum BoundedFile {
    #if canImport(Glibc)
    private static let systemRead = Glibc.read
    #else
    private static let systemRead = Darwin.read
    #endif

    /// Why a file was not read: it is not there, it could not be opened or read (with the
    /// system's `errno`), or it is larger than the limit.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case missing(path: String)
        case unreadable(path: String, errno: Int32)
        case tooLarge(path: String, maxBytes: Int)

        public var description: String {
            switch self {
            case .missing(let path), .unreadable(let path, _), .tooLarge(let path, _): "\(path): \(reason)"
            }
        }

        /// What is wrong, without the path.
        public var reason: String {
            switch self {
            case .missing: "no such file"
            case .unreadable(_, let errno): "cannot be read: \(String(cString: strerror(errno))) (errno \(errno))"
            case .tooLarge(_, let maxBytes): "larger than \(maxBytes) bytes"
            }
        }
    }

    /// The file's bytes, if it holds at most `maxBytes`.
    public static func read(_ path: String, maxBytes: Int) throws(Problem) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw errno == ENOENT ? .missing(path: path) : .unreadable(path: path, errno: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count <= maxBytes {
            let want = min(chunk.count, maxBytes + 1 - bytes.count)
            let got = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, want) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            if got == 0 { return bytes }
            bytes += chunk[0..<got]
        }
        throw .tooLarge(path: path, maxBytes: maxBytes)
    }
}
