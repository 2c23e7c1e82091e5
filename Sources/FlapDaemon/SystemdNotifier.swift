#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// systemd's notify protocol, written here rather than linked from libsystemd: datagrams such
/// as `READY=1` or `STATUS=…` to the socket named by `$NOTIFY_SOCKET` (a leading `@` is the
/// abstract namespace). Safe from any thread, the conductor's included: one non-blocking
/// `sendto` per message.
public final class SystemdNotifier: Sendable {
    private let fd: Int32
    private let address: [UInt8]
    /// How often to send `WATCHDOG=1` (half of `$WATCHDOG_USEC`), when systemd watches this process.
    public let watchdogInterval: Int64?

    /// A notifier for this process's environment, or nil when systemd did not ask for one.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 else { return nil }
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        address = bytes
        let pidMatches = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if pidMatches, let usec = environment["WATCHDOG_USEC"].flatMap(Int64.init), usec > 0 {
            watchdogInterval = usec * 1000 / 2
        } else {
            watchdogInterval = nil
        }
    }

    deinit { close(fd) }

    /// Sends one message (newline-separated assignments); false when it could not be sent.
    @discardableResult
    public func send(_ message: String) -> Bool {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { path in
            for (i, b) in address.enumerated() { path[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count)
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                sendto(fd, bytes, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), sa, length)
            }
        }
        return sent == bytes.count
    }
}
