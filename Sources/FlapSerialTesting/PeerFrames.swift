import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a descriptor until `running` turns false (or the descriptor ends) and hands on each
/// frame's bytes between 0x00 delimiters, unstuffed and with a good CRC32 stripped — read with
/// the independent decoder. Frames that fail are skipped. `quiet` is called each time 50 ms
/// pass with nothing to read (every byte written before such a spell began has been handed on).
enum PeerFrames {
    static func read(_ fd: Int32, running: () -> Bool, stopAtEnd: Bool, quiet: () -> Void, _ frame: ([UInt8]) -> Void) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while running() {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { quiet(); continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { if stopAtEnd { return } else { continue } }
            for b in buffer[0..<n] {
                guard b == 0 else { pending.append(b); continue }
                defer { pending = [] }
                if !pending.isEmpty, let body = Independent.body(Independent.unstuff(pending)) { frame(body) }
            }
        }
    }

    /// Writes `body ‖ CRC32` stuffed and delimited; `corrupt` flips a bit after the CRC is made.
    static func write(_ fd: Int32, _ body: [UInt8], corrupt: Int? = nil) {
        let c = Independent.crc32(body)
        var raw = body + [UInt8(c & 255), UInt8(c >> 8 & 255), UInt8(c >> 16 & 255), UInt8(c >> 24)]
        if let corrupt { raw[corrupt] ^= 0x02 }
        let bytes = Independent.stuff(raw) + [0]
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }
}

/// The path of a pty's slave side, read from /proc/self/fd (`ttyname` shares one static
/// buffer among threads: two tests opening ptys at once could each get the other's path).
func slavePath(slave: Int32) -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(slave)")) ?? ""
}
