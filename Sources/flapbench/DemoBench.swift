import FlapClock
import FlapTiming
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// CPU time and peak RSS of a real `flapd demo` (local API on, stdout to /dev/null) playing
/// full-board transitions posted over loopback, read from wait4's rusage.
enum DemoBench {
    static func run(transitions: Int, flapd: String?) async throws {
        let flapd = flapd ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flapd").path
        print("== flapd demo (\(flapd)): \(transitions) full-board transitions posted to its local API, stdout to /dev/null")
        guard FileManager.default.isExecutableFile(atPath: flapd) else { row("flapd demo", "no flapd beside flapbench (swift build first)"); return }

        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let args = [flapd, "demo", "--plain", "--no-sound", "--port", "0"]
        var argv = args.map { strdup($0) } + [nil]
        var pid: pid_t = 0
        closeOtherDescriptors(&actions)
        let rc = withCleanSignals { posix_spawn(&pid, flapd, &actions, &$0, &argv, environ) }
        argv.forEach { free($0) }
        posix_spawn_file_actions_destroy(&actions)
        close(fds[1])
        guard rc == 0 else { row("flapd demo", "could not start: \(String(cString: strerror(rc)))"); return }
        let started = MonotonicClock.now()

        let stderr = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        var log = ""
        var port: Int?
        while port == nil {
            let chunk = stderr.availableData
            if chunk.isEmpty { break }
            log += String(decoding: chunk, as: UTF8.self)
            if let r = log.range(of: #"listening on http://[^:]+:(\d+)"#, options: .regularExpression) {
                port = Int(log[r].split(separator: ":").last!)
            }
        }
        guard let port else { row("flapd demo", "no local API came up: \(log)"); return }
        let ready = Double(MonotonicClock.now() - started) / 1e6

        for i in 0..<transitions {
            // Every module changes, two flips each: a full-board cascade of 670 ms + 240 ms.
            let code = 1 + (2 * (i + 1)) % 26
            let rows = Array(repeating: Array(repeating: code, count: 22), count: 6)
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/local-api/message")!)
            request.httpMethod = "POST"
            request.httpBody = try JSONSerialization.data(withJSONObject: rows)
            _ = try await URLSession.shared.data(for: request)
            try await Task.sleep(for: .milliseconds(950))
        }
        // VmHWM belongs to the exec'd image alone; wait4's ru_maxrss would also count the
        // parent's pages the child shared before exec.
        let hwm = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { Double($0.split(separator: " ")[1]) } ?? 0
        kill(pid, SIGTERM)
        var status: Int32 = 0
        var usage = rusage()
        _ = wait4(pid, &status, 0, &usage)
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        let wall = Double(MonotonicClock.now() - started) / 1e9
        row("start to local API listening", String(format: "%.0f ms", ready))
        row("CPU time (user + system)", String(format: "%.2f s over %.1f s wall (%.1f %% of one core)", cpu, wall, 100 * cpu / wall))
        row("peak RSS (VmHWM)", String(format: "%.1f MB   (target ≤ 25 MB)", hwm / 1024))
        row("exit status after SIGTERM", "\((status >> 8) & 0xFF)")
    }
}
