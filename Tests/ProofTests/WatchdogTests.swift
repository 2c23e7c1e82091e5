import EndToEndSupport
import Foundation
import Synchronization
import Testing
import TestWaits
#if canImport(Glibc)
import Glibc
#endif

/// Issue 39, item 2: every door of a running flapd keeps answering while all of them are used at
/// once on a starved machine — the local API's routes and the page's assets, pages that open and
/// close `/events` (the churn that once deadlocked both event loops), and MQTT commands, good and
/// garbage, on a real Mosquitto — with `stress-ng --cpu 8` beside them (Debian's, installed by
/// `./setup --test`; without it the test says so and runs unstressed). Every request has a
/// generous bound against a hang, never a threshold; at the end the board settles on the last
/// message, sent over MQTT.
@Suite struct WatchdogTests {
    static let key = "watch-key"
    /// How long every door is driven (`FLAP_WATCHDOG_SECONDS` to run longer by hand).
    static let seconds = Double(ProcessInfo.processInfo.environment["FLAP_WATCHDOG_SECONDS"] ?? "") ?? 120

    /// One HTTP/1.1 exchange on a new connection (`Connection: close`); the answer's status line,
    /// or what went wrong. `stopAt`: for a stream, close once the answer holds it.
    static func exchange(port: Int, _ request: String, stopAt: String? = nil) -> String {
        guard let fd = loopbackConnection(port: port) else { return "<connect failed: errno \(errno)>" }
        defer { close(fd) }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? "<no answer in 60 s>" : "<recv errno \(errno)>" }
            if n == 0 { break }
            answer += buffer[..<n]
            if let stopAt, String(decoding: answer, as: UTF8.self).contains(stopAt) { break }
        }
        let text = String(decoding: answer, as: UTF8.self)
        return text.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? "<empty answer>"
    }

    static func request(_ method: String, _ path: String, body: String? = nil) -> String {
        "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Vestaboard-Local-Api-Key: \(key)\r\n"
            + (body.map { "Content-Type: application/json\r\nContent-Length: \($0.utf8.count)\r\n\r\n\($0)" } ?? "\r\n")
    }

    /// What each door answered: how many times, and every answer that was not the expected one.
    final class Tally: Sendable {
        let answers = Mutex<[String: (ok: Int, wrong: [String])]>([:])
        func note(_ door: String, _ status: String, expected: String) {
            answers.withLock { a in
                if status.hasPrefix(expected) { a[door, default: (0, [])].ok += 1 } else if a[door, default: (0, [])].wrong.count < 5 {
                    a[door, default: (0, [])].wrong.append(status)
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(10))) func everyDoorKeepsAnsweringOnAStarvedMachine() async throws {
        let dir = try scratchDirectory("flap-watchdog")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broker = try await MQTTBroker(dir: dir)
        defer { broker.stop() }
        try """
        local_api: { port: 0, key: \(Self.key) }
        mqtt: { host: 127.0.0.1, port: \(broker.port), node_id: watch, retry_seconds: [1, 2] }
        """.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        let watch = try MQTTWatch(port: broker.port, filter: "flapd/watch/#")
        defer { watch.stop() }
        let flapd = try FlapdProcess(["demo", "--config", dir + "/flapd.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(await watch.waitUntil { $0.contains { $0.topic == "flapd/watch/availability" && $0.payload == "online" } })

        let stressed = FileManager.default.isExecutableFile(atPath: "/usr/bin/stress-ng")
        let stress = stressed ? try FlapdProcess(["--cpu", "8", "--timeout", "\(Int(Self.seconds) + 30)s", "--quiet"], executable: "/usr/bin/stress-ng") : nil
        defer { stress?.terminate() }
        if !stressed { print("watchdog: stress-ng is not installed (./setup --test installs it): running unstressed") }

        let tally = Tally()
        let end = Date().addingTimeInterval(Self.seconds)
        let styles = ["classic", "wave", "drift", "curtain", "together"]
        let doors: [(name: String, make: @Sendable (Int) -> String, expected: String)] = [
            ("GET /status", { _ in Self.request("GET", "/status") }, "HTTP/1.1 200"),
            ("GET /metrics", { _ in Self.request("GET", "/metrics") }, "HTTP/1.1 200"),
            ("GET /local-api/message", { _ in Self.request("GET", "/local-api/message") }, "HTTP/1.1 200"),
            ("POST /local-api/message", { i in Self.request("POST", "/local-api/message", body: #"{"text": "ROUND \#(i) OF THE WATCH", "transition": "\#(styles[i % styles.count])"}"#) }, "HTTP/1.1 201"),
            ("POST /local-api/preview", { i in Self.request("POST", "/local-api/preview", body: #"{"text": "PREVIEW \#(i)"}"#) }, "HTTP/1.1 200"),
            ("GET /", { _ in Self.request("GET", "/") }, "HTTP/1.1 200"),
        ]
        let finished = DispatchSemaphore(value: 0)
        let threads = 5
        // Two clients on the routes, one after the other through every door.
        for client in 0..<2 {
            Thread {
                var i = client
                while Date() < end {
                    let door = doors[i % doors.count]
                    tally.note(door.name, Self.exchange(port: port, door.make(i)), expected: door.expected)
                    i += 2
                }
                finished.signal()
            }.start()
        }
        // Pages that open the board's stream, read its hello, and go, while the board flips.
        for _ in 0..<3 {
            Thread {
                while Date() < end {
                    let status = Self.exchange(port: port, Self.request("GET", "/events"), stopAt: "event: hello")
                    tally.note("GET /events", status, expected: "HTTP/1.1 200")
                }
                finished.signal()
            }.start()
        }
        // MQTT: messages and garbage, each garbage answered on the error topic.
        let garbage: [[UInt8]] = [[0xFF, 0xFE, 0x41], Array("{\u{301}\"text\": 1}".utf8), Array("[[99]]".utf8), [0xC3]]
        var published = 0, refusedExpected = 0
        while Date() < end {
            let payload: [UInt8] = published % 2 == 0 ? Array("MQTT ROUND \(published)".utf8) : garbage[(published / 2) % garbage.count]
            if published % 2 == 1 { refusedExpected += 1 }
            let file = dir + "/payload"
            FileManager.default.createFile(atPath: file, contents: Data(payload))
            #expect(try await mqttPublish(port: broker.port, topic: "flapd/watch/message/set", nil, options: ["-f", file]) == 0)
            published += 1
            // At most ten a second: past its 32 waiting commands the bridge drops the oldest of a
            // flood, with a warning (README), which is not what this test is about.
            try await Task.sleep(for: .milliseconds(100))
        }
        let stopped = await withCheckedContinuation { c in
            Thread { c.resume(returning: (0..<threads).allSatisfy { _ in finished.wait(timeout: .now() + 180) == .success }) }.start()
        }
        #expect(stopped, "a door stopped answering (a client is still waiting)")

        let answers = tally.answers.withLock { $0 }
        print("watchdog: \(Int(Self.seconds)) s\(stressed ? " under stress-ng --cpu 8" : ""): "
              + answers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.ok)" }.joined(separator: ", ") + ", MQTT \(published)")
        for door in doors.map(\.name) + ["GET /events"] {
            let a = answers[door]
            #expect((a?.ok ?? 0) > 0 && a?.wrong == [], "\(door): \(a.map { "\($0.ok) answered, wrong: \($0.wrong)" } ?? "never answered")")
        }
        let refused = refusedExpected
        #expect(await watch.waitUntil { $0.filter { $0.topic == "flapd/watch/error" }.count >= refused },
                "every garbage payload refused on the error topic: \(watch.seen.filter { $0.topic == "flapd/watch/error" }.count) of \(refusedExpected)")
        // The last word, by MQTT after all of it: the board settles on it, and the doors still answer.
        stress?.terminate()
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/watch/message/set", "THE WATCH IS OVER") == 0)
        #expect(await watch.waitUntil { seen in
            let after = seen.drop { !($0.topic == "flapd/watch/wall/state" && $0.json?["text"] as? String == "THE WATCH IS OVER") }
            return !after.isEmpty && seen.last { $0.topic == "flapd/watch/wall/moving" }?.payload == "OFF"
        }, "the board settles on the last message")
        for door in doors where door.name.hasPrefix("GET") {
            #expect(Self.exchange(port: port, door.make(0)).hasPrefix(door.expected), "\(door.name) after the watch")
        }
    }
}
