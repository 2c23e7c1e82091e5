import FlapClock
import FlapTiming
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The message path end to end: a real flaphub and a real flapd subscribed to it on loopback.
/// Latency from sending a POST to flaphub until the first flip of that message starts on flapd's
/// board (from flapd's trace, on CLOCK_MONOTONIC: the flip's 90° event less its planned offset),
/// one message at a time; then flaphub's sustained
/// accepted messages per second with the board connected.
enum MessagesBench {
    static func run(flapd: String?, messages: Int, seconds: Double) async throws {
        let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let flapd = flapd ?? bin.appendingPathComponent("flapd").path
        let flaphub = URL(fileURLWithPath: flapd).deletingLastPathComponent().appendingPathComponent("flaphub").path
        print("== message path: flaphub → WebSocket → flapd (\(flapd)), loopback")
        guard FileManager.default.isExecutableFile(atPath: flaphub) else { row("message path", "no flaphub beside flapd (swift build first)"); return }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flapbench-msg-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let port = freePort()
        try "database: \(dir)/hub.db\nport: \(port)\nmessages_per_hour: 1000000\n".write(toFile: dir + "/hub.yaml", atomically: true, encoding: .utf8)
        let alice = try admin(flaphub, ["user", "add", "alice", "--config", dir + "/hub.yaml"])
        let board = try admin(flaphub, ["user", "add", "board", "--config", dir + "/hub.yaml"])
        _ = try admin(flaphub, ["friend", "add", "alice", "board", "--config", dir + "/hub.yaml"])
        let hub = try ServiceBench.spawn(flaphub, ["serve", "--config", dir + "/hub.yaml", "--log-level", "warning"], env: [])
        defer { kill(hub, SIGTERM); var s: Int32 = 0; waitpid(hub, &s, 0) }
        try """
            message_api: { url: "http://127.0.0.1:\(port)", token: "\(board)" }
            local_api: { enabled: false }
            sound: { enabled: false }
            timing: { flip_ms: 50, column_stagger_ms: 0, row_stagger_ms: 0 }
            boards: [{ id: wall, align: { horizontal: left, vertical: top } }]
            """.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        let trace = TraceTail(path: dir + "/trace.jsonl")
        let daemon = try ServiceBench.spawn(flapd, ["run", "--config", dir + "/flapd.yaml", "--plain", "--no-sound",
                                                    "--trace", trace.path, "--log-level", "warning"], env: [])
        defer { kill(daemon, SIGTERM); var s: Int32 = 0; waitpid(daemon, &s, 0) }

        // Each message is one glyph, the next on the drum after the last (A, B, C, …): the top-left
        // module moves one or two flaps from rest, so the transition's first flip is at its start.
        // The next message waits until that move has ended: a message that lands mid-flip would
        // wait (rightly) for the flip in progress to end, which is not the message path's doing.
        let glyphs = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?+")
        var sendToFlip: [Double] = [], ackToFlip: [Double] = [], sendToClack: [Double] = []
        var failures = 0
        for i in -3..<messages {
            let sent = MonotonicClock.now()
            guard await post(port: port, token: alice, content: String(glyphs[(i + 3) % glyphs.count])) else { failures += 1; continue }
            let acked = MonotonicClock.now()
            guard let (flip, ninety) = trace.nextTransitionFirstFlip(timeout: 10) else { failures += 1; continue }
            if i >= 0 {  // the first three warm up (and wait out the board's first connect)
                sendToFlip.append(Double(flip - sent) / 1e6)
                ackToFlip.append(Double(flip - acked) / 1e6)
                sendToClack.append(Double(ninety - sent) / 1e6)
            }
            MonotonicClock.sleep(until: flip + 2 * 50_000_000 + 20_000_000)
        }
        report("POST sent → first flip starts", sendToFlip, of: messages, failures: failures)
        report("POST answered → first flip starts", ackToFlip, of: messages, failures: failures)
        report("POST sent → its 90° event (flip 50 ms)", sendToClack, of: messages, failures: failures)

        // Sustained: 8 senders posting back to back for `seconds`.
        let deadline = MonotonicClock.now() + Int64(seconds * 1e9)
        let accepted = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var n = 0
                    while MonotonicClock.now() < deadline { if await post(port: port, token: alice, content: "Z \(n)") { n += 1 } }
                    return n
                }
            }
            return await group.reduce(0, +)
        }
        row("flaphub accepted messages (8 senders)", String(format: "%.0f /s over %.0f s, the board connected", Double(accepted) / seconds, seconds))
    }

    static func report(_ label: String, _ ms: [Double], of n: Int, failures: Int) {
        let s = ms.sorted()
        guard !s.isEmpty else { row(label, "no message reached the board (\(failures) failed)"); return }
        row(label, String(format: "p50 %.2f ms  p99 %.2f ms  max %.2f ms  (%d messages%@)", s[s.count / 2],
                          s[min(s.count - 1, Int(Double(s.count) * 0.99))], s.last!, s.count,
                          failures > 0 ? ", \(failures) failed" : ""))
    }

    static func post(port: Int, token: String, content: String) async -> Bool {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/api/v1/messages")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.httpBody = try? JSONSerialization.data(withJSONObject: ["recipients": ["board"], "content": content])
        for _ in 0..<50 {
            if let (_, response) = try? await URLSession.shared.data(for: request) {
                return (response as? HTTPURLResponse)?.statusCode == 201
            }
            try? await Task.sleep(for: .milliseconds(100))  // the hub is still starting
        }
        return false
    }

    /// Runs a flaphub admin command and returns its stdout.
    static func admin(_ path: String, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A loopback port nobody listens on now.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}

/// Reads a growing flapd trace file: the first flip of each new transition.
final class TraceTail {
    let path: String
    private var handle: FileHandle?
    private var pending = ""
    private var lastTransition = 0

    init(path: String) { self.path = path }

    /// The CLOCK_MONOTONIC instants at which the first flip of the next transition started
    /// (its 90° event less its planned offset from the transition's start) and reached 90°.
    func nextTransitionFirstFlip(timeout: Double) -> (start: Int64, ninety: Int64)? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            // Opened once it exists, then read on from where the last read ended.
            if handle == nil { handle = FileHandle(forReadingAtPath: path) }
            if let data = try? handle?.readToEnd() { pending += String(decoding: data, as: UTF8.self) }
            while let newline = pending.firstIndex(of: "\n") {
                let line = pending[..<newline]
                pending = String(pending[pending.index(after: newline)...])
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let transition = object["transition"] as? Int, let at = (object["actual_ns"] as? NSNumber)?.int64Value,
                      let offset = object["planned_ms"] as? Double, transition > lastTransition else { continue }
                lastTransition = transition
                return (at - Int64(offset * 1e6), at)
            }
            usleep(200)
        }
        return nil
    }
}
