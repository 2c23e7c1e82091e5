import Foundation

/// Replaces a file so that a crash leaves either the old or the new contents: write a temporary
/// file (mode 600), fsync, rename over, fsync the folder.
enum AtomicFile {
    static func replace(_ file: String, in directory: String, with data: Data) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = file + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateError(path: temporary, reason: String(cString: strerror(errno))) }
        var failure: String?
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count, failure == nil {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 { if errno != EINTR { failure = String(cString: strerror(errno)) } } else { offset += n }
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        if let failure {
            unlink(temporary)
            throw StateError(path: temporary, reason: failure)
        }
        guard rename(temporary, file) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw StateError(path: file, reason: reason)
        }
        let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { fsync(dir); close(dir) }
    }
}
