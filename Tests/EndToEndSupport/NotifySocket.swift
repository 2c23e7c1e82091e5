import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Datagrams sent to a unix socket, as systemd's notify socket receives them.
public final class NotifySocket: @unchecked Sendable {
    public let path: String
    private let fd: Int32
    private let lock = NSCondition()
    private var messages: [String] = []

    public init(directory: String) throws {
        path = directory + "/notify"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { p in for (i, b) in path.utf8.enumerated() { p[i] = b } }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw CocoaError(.fileWriteUnknown) }
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                if n <= 0 { return }
                lock.lock()
                messages.append(String(decoding: buffer[0..<n], as: UTF8.self))
                lock.broadcast()
                lock.unlock()
            }
        }.start()
    }

    /// Waits until the messages so far satisfy `condition` (bounded only against a hang).
    @discardableResult
    public func waitUntil(_ condition: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        await withCheckedContinuation { c in Thread { c.resume(returning: self.blockingWaitUntil(condition)) }.start() }
    }

    @discardableResult
    public func blockingWaitUntil(_ condition: ([String]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(120)
        lock.lock()
        defer { lock.unlock() }
        while !condition(messages) { if !lock.wait(until: deadline) { return condition(messages) } }
        return true
    }

    public var all: [String] { lock.lock(); defer { lock.unlock() }; return messages }

    deinit { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
}

/// A `flapd demo` on a config file of its own, telling a notify socket here, once it has said
/// `READY=1`: the scene of the tests of reload and `STATUS=`.
public struct NotifiedDemo {
    public let flapd: FlapdProcess
    public let notify: NotifySocket
    public let port: Int
    /// The config file (rewrite it, then SIGHUP).
    public let config: String

    /// The unit file of the repository.
    public static let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("systemd/flapd.service")

    public init(in dir: String, config yaml: String, arguments: [String] = []) async throws {
        config = dir + "/flapd.yaml"
        try yaml.write(toFile: config, atomically: true, encoding: .utf8)
        notify = try NotifySocket(directory: dir)
        flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--config", config] + arguments,
                                 environment: ["NOTIFY_SOCKET": notify.path])
        port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(await notify.waitUntil { $0.contains { $0.hasPrefix("READY=1") } }, "\(notify.all)")
    }
}
