import FlapClock
import FlapTiming
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The service's figures: exec to READY=1 over the notify protocol, and resident memory after
/// an hour of messages played fast compared with after its first minute.
enum ServiceBench {
    static func run(flapd: String?) async throws {
        let flapd = flapd ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flapd").path
        print("== service (\(flapd))")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flapbench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socketPath = dir + "/notify"
        let sock = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { p in for (i, b) in socketPath.utf8.enumerated() { p[i] = b } }
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        defer { close(sock) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        // exec → READY=1, ten starts.
        var readies: [Double] = []
        for _ in 0..<10 {
            let start = MonotonicClock.now()
            let pid = try spawn(flapd, ["demo", "--plain", "--no-sound", "--port", "0"], env: ["NOTIFY_SOCKET=\(socketPath)"])
            if waitFor("READY=1", on: sock) { readies.append(Double(MonotonicClock.now() - start) / 1e6) }
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        readies.sort()
        if readies.isEmpty { row("exec to READY=1", "never ready") } else {
            row("exec to READY=1 (10 starts)", String(format: "p50 %.0f ms  max %.0f ms", readies[readies.count / 2], readies.last!))
        }

        // An hour of messages, one every 10 s (360), played back to back; RSS after the first
        // minute's worth (6) and after all.
        let config = dir + "/fast.yaml"
        try "timing: { flip_ms: 50, column_stagger_ms: 1, row_stagger_ms: 2 }\n".write(toFile: config, atomically: true, encoding: .utf8)
        let pid = try spawn(flapd, ["demo", "--plain", "--no-sound", "--port", "0", "--config", config, "--state-dir", dir + "/state"],
                            env: ["NOTIFY_SOCKET=\(socketPath)"])
        defer { kill(pid, SIGTERM); var s: Int32 = 0; waitpid(pid, &s, 0) }
        guard let ready = waitForMessage(prefix: "READY=1", on: sock),
              let r = ready.range(of: #":\d+;"#, options: .regularExpression), let port = Int(ready[r].dropFirst().dropLast()) else {
            row("RSS over an hour of messages", "flapd did not become ready"); return
        }
        var rssAfterMinute = 0.0
        let words = ["GOOD MORNING", "TEA IS READY", "BACK AT 7", "LOVE YOU", "FLIGHT LANDED", "DINNER?"]
        for i in 0..<360 {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/local-api/message")!)
            request.httpMethod = "POST"
            request.httpBody = try JSONSerialization.data(withJSONObject: ["text": "\(words[i % words.count]) \(i)"])
            _ = try await URLSession.shared.data(for: request)
            try await Task.sleep(for: .milliseconds(40))
            if i == 5 { rssAfterMinute = rss(pid) }
        }
        let rssAfterHour = rss(pid)
        row("RSS after a minute / an hour of messages", String(format: "%.1f MB / %.1f MB (%+.1f MB)", rssAfterMinute / 1024, rssAfterHour / 1024,
                                                              (rssAfterHour - rssAfterMinute) / 1024))
    }

    static func rss(_ pid: pid_t) -> Double {
        (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Double($0.split(separator: " ")[1]) } ?? 0
    }

    static func waitFor(_ prefix: String, on sock: Int32) -> Bool { waitForMessage(prefix: prefix, on: sock) != nil }

    static func waitForMessage(prefix: String, on sock: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(sock, $0.baseAddress!, $0.count, 0) }
            if n <= 0 { return nil }
            let message = String(decoding: buffer[0..<n], as: UTF8.self)
            if message.hasPrefix(prefix) { return message }
        }
    }

    static func spawn(_ path: String, _ args: [String], env extra: [String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" } + extra
        var argv = ([path] + args).map { strdup($0) } + [nil]
        var envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        closeOtherDescriptors(&actions)
        let rc = withCleanSignals { posix_spawn(&pid, path, &actions, &$0, &argv, &envp) }
        guard rc == 0 else { throw CocoaError(.executableLoad) }
        return pid
    }
}
