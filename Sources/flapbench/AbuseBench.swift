import FlapClock
import FlapTiming
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The local API and flaphub under abuse, on loopback only and bounded in count and time:
/// 100 good keep-alive clients alone, then beside a crowd of 1,000 clients (each three
/// connections, one request each, from 40 loopback addresses) and 500 slowloris connections
/// (a byte a second of a head that never ends); the good requests' p50 / p99, what the crowd
/// was answered, and the server's file descriptors and RSS before, during and after.
enum AbuseBench {
    static func run(flapd: String?) throws {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let flapd = flapd ?? folder.appendingPathComponent("flapd").path
        let flaphub = folder.appendingPathComponent("flaphub").path
        print("== abuse (loopback; 100 good clients, a crowd of 1,000, 500 slowloris)")
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)

        let port = MessagesBench.freePort()
        let board = try ServiceBench.spawn(flapd, ["demo", "--plain", "--no-sound", "--port", "\(port)"], env: [])
        defer { kill(board, SIGTERM); var s: Int32 = 0; waitpid(board, &s, 0) }
        if waitUntilListening(port) {
            let body = #"{"text": "GOOD MORNING"}"#
            let post = "POST /local-api/message HTTP/1.1\r\nHost: bench\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            row("local API: 100 clients posting messages", goodClients(port: port, request: post, seconds: 5, expect: 201) { }.summary)
            measure("local API", pid: board, port: port, request: "GET /local-api/message HTTP/1.1\r\nHost: bench\r\n\r\n")
        } else { row("local API", "flapd did not listen") }

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flapbench-abuse-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let token = try MessagesBench.admin(flaphub, ["user", "add", "bench", "--database", dir + "/hub.db"])
        let hubPort = MessagesBench.freePort()
        let hub = try ServiceBench.spawn(flaphub, ["serve", "--port", "\(hubPort)", "--database", dir + "/hub.db"], env: [])
        defer { kill(hub, SIGTERM); var s: Int32 = 0; waitpid(hub, &s, 0) }
        if waitUntilListening(hubPort) {
            measure("flaphub", pid: hub, port: hubPort,
                    request: "GET /api/v1/users/me HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\n\r\n")
        } else { row("flaphub", "flaphub did not listen") }
    }

    static func measure(_ name: String, pid: pid_t, port: Int, request: String) {
        let before = (fds: fds(pid), rss: ServiceBench.rss(pid))
        let alone = goodClients(port: port, request: request, seconds: 5) { }
        row("\(name): 100 good clients alone", alone.summary)

        // The crowd comes three times: what the first leaves behind is the allocator keeping
        // its high-water mark; growth that goes on round after round would be a leak.
        var afterEach: [(fds: Int, rss: Double)] = []
        var during = (fds: 0, rss: 0.0)
        for round in 1...3 {
            let crowdAnswers = Mutex([Int: Int]())
            let withCrowd = goodClients(port: port, request: request, seconds: 10) {
                let slow = slowloris(port: port, count: 500, seconds: 8)
                let crowd = (0..<1000).map { i in
                    Thread {
                        for _ in 0..<3 {
                            let status = oneShot(port: port, source: "127.0.2.\(1 + i % 40)", request: request)
                            crowdAnswers.withLock { $0[status, default: 0] += 1 }
                        }
                    }
                }
                crowd.forEach { $0.start() }
                Thread.sleep(forTimeInterval: 4)
                during = (fds(pid), ServiceBench.rss(pid))
                slow.wait()
                while crowdAnswers.withLock({ $0.values.reduce(0, +) }) < 3000 { Thread.sleep(forTimeInterval: 0.1) }
            }
            row("\(name): 100 good clients beside crowd \(round)", withCrowd.summary)
            let answers = crowdAnswers.withLock { $0 }.sorted { $0.key < $1.key }
                .map { $0.key == 0 ? "\($0.value) no answer" : "\($0.value) × \($0.key)" }.joined(separator: ", ")
            row("\(name): crowd \(round)'s 3,000 requests", answers)
            // The crowd has gone; give the server a moment (bounded) to close what it held.
            var after = (fds: fds(pid), rss: ServiceBench.rss(pid))
            for _ in 0..<50 where after.fds > before.fds {
                Thread.sleep(forTimeInterval: 0.2)
                after = (fds(pid), ServiceBench.rss(pid))
            }
            afterEach.append(after)
        }
        row("\(name): fds before/during/after crowds", "\(before.fds) / \(during.fds) / " + afterEach.map { "\($0.fds)" }.joined(separator: ", "))
        row("\(name): RSS before/during/after crowds", String(format: "%.1f / %.1f / ", before.rss / 1024, during.rss / 1024)
            + afterEach.map { String(format: "%.1f", $0.rss / 1024) }.joined(separator: ", ") + " MB")
    }

    struct Latencies {
        var millis: [Double] = []
        var failures = 0
        /// The 99th percentile, in ms (NaN when nothing answered).
        var p99: Double { let s = millis.sorted(); return s.isEmpty ? .nan : s[min(s.count - 1, s.count * 99 / 100)] }
        var summary: String {
            let s = millis.sorted()
            guard !s.isEmpty else { return "no answers (\(failures) failed)" }
            return String(format: "p50 %.2f ms  p99 %.2f ms  max %.2f ms  (%d requests, %d failed)", s[s.count / 2], p99, s.last!, s.count, failures)
        }
    }

    /// 100 keep-alive clients (from 127.0.1.1–4) asking `request` in a loop for `seconds`,
    /// while `meanwhile` runs; their latencies.
    static func goodClients(port: Int, request: String, seconds: Double, expect: Int = 200, meanwhile: () -> Void) -> Latencies {
        let result = Mutex(Latencies())
        let stop = Atomic<Bool>(false)
        let done = DispatchGroup(), connected = DispatchGroup()
        for i in 0..<100 {
            done.enter()
            connected.enter()
            Thread {
                defer { done.leave() }
                var fd = connectFrom("127.0.1.\(1 + i % 4)", port: port)
                connected.leave()
                var mine = Latencies()
                while !stop.load(ordering: .relaxed) {
                    if fd < 0 { fd = connectFrom("127.0.1.\(1 + i % 4)", port: port) }
                    let start = MonotonicClock.now()
                    if fd >= 0, exchange(fd, request) == expect {
                        mine.millis.append(Double(MonotonicClock.now() - start) / 1e6)
                    } else {
                        mine.failures += 1
                        if fd >= 0 { close(fd) }
                        fd = -1
                    }
                }
                if fd >= 0 { close(fd) }
                result.withLock { $0.millis += mine.millis; $0.failures += mine.failures }
            }.start()
        }
        connected.wait()   // the good clients hold their connections before any crowd comes
        let started = MonotonicClock.now()
        meanwhile()
        let left = seconds - Double(MonotonicClock.now() - started) / 1e9
        if left > 0 { Thread.sleep(forTimeInterval: left) }
        stop.store(true, ordering: .relaxed)
        done.wait()
        return result.withLock { $0 }
    }

    /// `count` connections (from 127.0.3.1–20) each sending one byte a second of a head that
    /// never ends, for `seconds`, then closed. Returns at once; `wait()` the group.
    static func slowloris(port: Int, count: Int, seconds: Int) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        Thread {
            defer { group.leave() }
            var fds = (0..<count).map { connectFrom("127.0.3.\(1 + $0 % 20)", port: port) }
            let head = Array("GET /status HTTP/1.1\r\nHost: slow\r\nX-Slow: ".utf8)
            for second in 0..<seconds {
                for (i, fd) in fds.enumerated() where fd >= 0 {
                    let byte = second == 0 ? head : [0x61]
                    if send(fd, byte, byte.count, Int32(MSG_NOSIGNAL)) < 0 { close(fd); fds[i] = -1 }
                }
                Thread.sleep(forTimeInterval: 1)
            }
            fds.filter { $0 >= 0 }.forEach { close($0) }
        }.start()
        return group
    }

    /// One connection, one request; the status, 0 when none came.
    static func oneShot(port: Int, source: String, request: String) -> Int {
        let fd = connectFrom(source, port: port)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return exchange(fd, request)
    }

    /// Sends a request and reads its answer (head and Content-Length body); the status, 0 on
    /// a failure or after 10 s.
    static func exchange(_ fd: Int32, _ request: String) -> Int {
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { return 0 }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return 0 }
            answer += buffer[..<n]
            guard let end = answer.firstRange(of: Array("\r\n\r\n".utf8)) else { continue }
            let head = String(decoding: answer[..<end.lowerBound], as: UTF8.self)
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            if answer.count - end.upperBound >= length {
                return Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
            }
        }
    }

    static func connectFrom(_ source: String, port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &local) { l in
            l.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0 && withUnsafePointer(to: &remote) { r in
            r.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
        if !ok { close(fd); return -1 }
        return fd
    }

    /// Up to 30 s for the server to accept connections.
    static func waitUntilListening(_ port: Int) -> Bool {
        for _ in 0..<300 {
            let fd = connectFrom("127.0.0.1", port: port)
            if fd >= 0 { close(fd); return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    static func fds(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }
}
