import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The local API beside what once stopped it (issue 39): pages that open and close `/events`
/// while the board flips (the churn that deadlocked both event loops), and MQTT garbage on a real
/// Mosquitto (payloads that are not UTF-8, `{` with a combining mark, wrong codes) — 100 good
/// keep-alive clients alone and then beside both, as a ratio of the same run; how many pages came
/// and went, how much garbage was sent, and whether every door still answers after.
enum ChurnBench {
    static func run(flapd: String) throws {
        print("== abuse: /events churn and MQTT garbage beside 100 good clients")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flapbench-churn-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let mosquitto = "/usr/sbin/mosquitto", publish = "/usr/bin/mosquitto_pub"
        let brokerPort = MessagesBench.freePort()
        var broker: pid_t?
        if FileManager.default.isExecutableFile(atPath: mosquitto) && FileManager.default.isExecutableFile(atPath: publish) {
            try "listener \(brokerPort) 127.0.0.1\npersistence false\nallow_anonymous true\n\(geteuid() == 0 ? "user root\n" : "")"
                .write(toFile: dir + "/mosquitto.conf", atomically: true, encoding: .utf8)
            broker = try ServiceBench.spawn(mosquitto, ["-c", dir + "/mosquitto.conf"], env: [])
        }
        defer { if let broker { kill(broker, SIGTERM); var s: Int32 = 0; waitpid(broker, &s, 0) } }
        if broker == nil || !AbuseBench.waitUntilListening(brokerPort) { row("MQTT", "mosquitto is not installed or did not listen: no garbage sent") }
        let port = MessagesBench.freePort()
        try ("local_api: { port: \(port) }\n" + (broker == nil ? "" : "mqtt: { host: 127.0.0.1, port: \(brokerPort), node_id: bench }\n"))
            .write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        let board = try ServiceBench.spawn(flapd, ["demo", "--plain", "--no-sound", "--config", dir + "/flapd.yaml"], env: [])
        defer { kill(board, SIGTERM); var s: Int32 = 0; waitpid(board, &s, 0) }
        guard AbuseBench.waitUntilListening(port) else { return row("local API", "flapd did not listen") }

        let get = "GET /local-api/message HTTP/1.1\r\nHost: bench\r\n\r\n"
        let alone = AbuseBench.goodClients(port: port, request: get, seconds: 5) { }
        row("local API: 100 good clients alone", alone.summary)
        let pages = Atomic<Int>(0), pagesFailed = Atomic<Int>(0), garbage = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let done = DispatchGroup()
        let beside = AbuseBench.goodClients(port: port, request: get, seconds: 10) {
            // The board flips all the while: a message every half second.
            let body = #"{"text": "THE BOARD FLIPS WHILE PAGES COME AND GO", "transition": "together"}"#
            let post = "POST /local-api/message HTTP/1.1\r\nHost: bench\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            start(done) { while !stop.load(ordering: .relaxed) { _ = AbuseBench.oneShot(port: port, source: "127.0.4.1", request: post); Thread.sleep(forTimeInterval: 0.5) } }
            for page in 0..<6 {
                start(done) {
                    while !stop.load(ordering: .relaxed) {
                        let ok = openAndClose(port: port, source: "127.0.5.\(1 + page)")
                        if ok { pages.add(1, ordering: .relaxed) } else { pagesFailed.add(1, ordering: .relaxed) }
                    }
                }
            }
            if broker != nil {
                let payloads: [[UInt8]] = [[0xFF, 0xFE, 0x41], Array("{\u{301}\"text\": 1}".utf8), Array("[\u{300}[1]]".utf8), Array("[[99]]".utf8), [0xC3]]
                start(done) {
                    var i = 0
                    while !stop.load(ordering: .relaxed) {
                        let file = dir + "/garbage-\(i % payloads.count)"
                        FileManager.default.createFile(atPath: file, contents: Data(payloads[i % payloads.count]))
                        if let pid = try? ServiceBench.spawn(publish, ["-h", "127.0.0.1", "-p", "\(brokerPort)", "-t", "flapd/bench/message/set", "-f", file], env: []) {
                            var s: Int32 = 0; waitpid(pid, &s, 0)
                            garbage.add(1, ordering: .relaxed)
                        }
                        i += 1
                    }
                }
            }
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        row("local API: 100 good clients beside the churn", beside.summary)
        row("local API: p99 beside / alone", String(format: "%.2f×", beside.p99 / alone.p99))
        row("/events: pages opened and closed", "\(pages.load(ordering: .relaxed)) (\(pagesFailed.load(ordering: .relaxed)) without a hello in 10 s)")
        if broker != nil { row("MQTT: garbage payloads sent", "\(garbage.load(ordering: .relaxed))") }
        let after = ["GET /status", "GET /local-api/message", "GET /events"].map { door -> String in
            let status = door == "GET /events" ? (openAndClose(port: port, source: "127.0.4.2") ? 200 : 0)
                : AbuseBench.oneShot(port: port, source: "127.0.4.2", request: "\(door) HTTP/1.1\r\nHost: bench\r\n\r\n")
            return "\(door) \(status == 0 ? "no answer" : "\(status)")"
        }
        row("after: every door", after.joined(separator: ", "))
    }

    static func start(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread { body(); group.leave() }.start()
    }

    /// Opens the board's stream as a page does, reads until its hello, and closes: whether the
    /// hello came (within the connection's 10 s).
    static func openAndClose(port: Int, source: String) -> Bool {
        let fd = AbuseBench.connectFrom(source, port: port)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let request = Array("GET /events HTTP/1.1\r\nHost: bench\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return false }
        var seen: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return false }
            seen += buffer[..<n]
            if seen.firstRange(of: Array("event: hello".utf8)) != nil { return true }
        }
    }
}
