import EndToEndSupport
import Foundation
import Testing

/// Issue 16, item 3: flapd as a Home Assistant device over MQTT, against a real Mosquitto broker
/// (Debian's) started by the test, seen through Mosquitto's own clients; the discovery messages
/// checked with Home Assistant's own schemas (`Tests/clients/ha-discovery-check.py`).
@Suite(.serialized) struct MQTTTests {
    static let node = "hall"

    func config(_ dir: String, broker: Int, extra: String = "") throws -> String {
        let file = dir + "/flapd.yaml"
        try """
        local_api: { port: 0 }
        mqtt:
          host: 127.0.0.1
          port: \(broker)
          node_id: \(Self.node)
          retry_seconds: [1, 2]
        \(extra)
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    static let discoveryTopics = [
        "homeassistant/text/hall/message/config", "homeassistant/button/hall/home/config", "homeassistant/switch/hall/quiet/config",
        "homeassistant/sensor/hall/wall_shows/config", "homeassistant/binary_sensor/hall/wall_moving/config",
        "homeassistant/sensor/hall/wall_faulty_modules/config", "homeassistant/select/hall/saved_board/config",
        "homeassistant/text/hall/save_board/config", "homeassistant/text/hall/delete_saved_board/config",
    ]

    static func announced(_ seen: [MQTTWatch.Seen]) -> Bool {
        discoveryTopics.allSatisfy { t in seen.contains { $0.topic == t } }
            && seen.contains { $0.topic == "flapd/hall/availability" && $0.payload == "online" }
            && seen.contains { $0.topic == "flapd/hall/wall/state" }
    }

    @Test(.timeLimit(.minutes(10))) func discoveryStateAndCommands() async throws {
        let dir = try scratchDirectory("flap-mqtt")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Signed in: the broker takes no anonymous client, flapd's password comes from a file.
        let passwd = try FlapdProcess(["-b", "-c", dir + "/passwd", "flapd", "s3cret words"], executable: "/usr/bin/mosquitto_passwd")
        #expect(await passwd.waitForExit() == 0)
        try "s3cret words\n".write(toFile: dir + "/mqtt-password", atomically: true, encoding: .utf8)
        chmod(dir + "/mqtt-password", 0o600)
        let broker = try await MQTTBroker(dir: dir, extra: "allow_anonymous false\npassword_file \(dir)/passwd\n")
        defer { broker.stop() }
        let auth = ["-u", "flapd", "-P", "s3cret words"]
        let flapd = try FlapdProcess(["demo", "--config", try config(dir, broker: broker.port, extra: "  username: flapd\n  password_file: \(dir)/mqtt-password"),
                                      "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        // Retained: a subscriber that comes later still sees the device.
        let watch = try MQTTWatch(port: broker.port, options: auth)
        defer { watch.stop() }
        #expect(await watch.waitUntil(Self.announced), "\(watch.seen) \(flapd.stderr)")
        #expect(!flapd.stderr.contains("s3cret"), "a secret in the log")

        // Discovery: retained, and valid by Home Assistant's own schemas.
        let discovery = watch.seen.filter { $0.topic.hasPrefix("homeassistant/") }
        #expect(discovery.allSatisfy { $0.retained })
        let results = try await homeAssistantCheck(discovery, dir: dir)
        #expect(results.count == Self.discoveryTopics.count)
        for r in results { #expect(r["ok"] as? Bool == true, "\(r)") }
        let text = try #require(discovery.first { $0.topic.contains("/text/") }?.json)
        #expect(text["command_topic"] as? String == "flapd/hall/message/set")
        #expect((text["availability"] as? [[String: Any]])?.compactMap { $0["topic"] as? String } == ["flapd/hall/availability", "flapd/hall/wall/availability"])
        #expect(text["availability_mode"] as? String == "all")

        // Home Assistant restarting (its birth message) gets the discovery again.
        #expect(try await mqttPublish(port: broker.port, topic: "homeassistant/status", "online", options: auth) == 0)
        #expect(await watch.waitUntil { seen in Self.discoveryTopics.allSatisfy { t in seen.filter { $0.topic == t }.count == 2 } }, "\(watch.seen.count)")

        // A command shows on the board, through the inbox: moving, then what it shows.
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/message/set", "HELLO FROM MQTT", options: auth) == 0)
        #expect(await watch.waitUntil { seen in
            let after = seen.drop { !($0.topic == "flapd/hall/wall/moving" && $0.payload == "ON") }
            return after.contains { $0.topic == "flapd/hall/wall/moving" && $0.payload == "OFF" }
                && after.contains { $0.topic == "flapd/hall/wall/state" && $0.json?["text"] as? String == "HELLO FROM MQTT" }
        }, "\(watch.seen.suffix(6)) \(flapd.stderr)")
        let state = try #require(watch.seen.last { $0.topic == "flapd/hall/wall/state" }?.json)
        #expect(state["sender"] as? String == "local" && (state["rows"] as? [String])?.count == 6, "\(state)")
        // Issue 35: the faulty-modules sensor's state — none faulty on a virtual board.
        let modules = try #require(watch.seen.last { $0.topic == "flapd/hall/wall/modules" }?.json, "\(watch.seen.map(\.topic))")
        #expect(modules["faulty"] as? Int == 0 && modules["which"] as? [String] == [] && (modules["worst_magnet_error"] as? [String: Int])?.isEmpty == true, "\(modules)")
        let board = try await http("GET", port: port)
        let codes = try #require((board.json as? [String: Any])?["message"] as? [[Int]])
        #expect(codes[2].filter { $0 != 0 }.count == 13, "\(codes)")  // HELLO FROM MQTT, on the middle row
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?.contains("   HELLO FROM MQTT    ") == true }, "\(flapd.stdout.suffix(800))")

        // A local API body as JSON works too; a bad one is refused with the reason, nothing moves.
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/message/set", #"{"characters": [[99]]}"#, options: auth) == 0)
        #expect(await watch.waitUntil { $0.contains { $0.topic == "flapd/hall/error" && ($0.json?["error"] as? String) == "expected 6 rows, got 1" } },
                "\(watch.seen.suffix(4))")
        // The home button on a board without home sensors: refused, said why.
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/home/press", "PRESS", options: auth) == 0)
        #expect(await watch.waitUntil { $0.contains { $0.topic == "flapd/hall/error" && ($0.json?["error"] as? String)?.contains("home sensors") == true } })

        // The quiet switch: on holds the next message (the board keeps what it shows), AUTO gives it back to the clock.
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/quiet/set", "ON", options: auth) == 0)
        #expect(await watch.waitUntil { $0.last { $0.topic == "flapd/hall/quiet" }?.payload == "ON" })
        let status = try #require(try await http("GET", port: port, path: "/status").json as? [String: Any])
        #expect((status["quiet"] as? [String: Any])?["switched"] as? Bool == true, "\(status)")
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/quiet/set", "AUTO", options: auth) == 0)
        #expect(await watch.waitUntil { $0.last { $0.topic == "flapd/hall/quiet" }?.payload == "OFF" })

        // A flood of commands and one too large: flapd stays up, refuses the large one by its size,
        // and the board ends on the last message sent.
        try String(repeating: "X", count: 70_000).write(toFile: dir + "/large", atomically: true, encoding: .utf8)
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/message/set", nil, options: auth + ["-f", dir + "/large"]) == 0)
        #expect(await watch.waitUntil { $0.contains { $0.topic == "flapd/hall/error" && ($0.json?["error"] as? String)?.contains("larger than 65536 bytes") == true } })
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/message/set", "FLOOD", options: auth + ["--repeat", "500"]) == 0)
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/message/set", "THE LAST ONE", options: auth) == 0)
        #expect(await watch.waitUntil { $0.last { $0.topic == "flapd/hall/wall/state" }?.json?["text"] as? String == "THE LAST ONE" },
                "\(watch.seen.suffix(4)) \(flapd.stderr.suffix(2000))")

        // Issue 38, item 3: saved boards — save what the board shows, restore it from the select
        // (whose options follow the saved names), delete it; a name it does not have is refused.
        let select = "homeassistant/select/hall/saved_board/config"
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/saved/save", "last-one", options: auth) == 0)
        #expect(await watch.waitUntil { $0.last { $0.topic == select }?.json?["options"] as? [String] == ["last-one"] }, "\(watch.seen.suffix(4))")
        #expect(await watch.waitUntil { $0.last { $0.topic == "flapd/hall/saved" }?.payload == "last-one" })
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/message/set", "SOMETHING ELSE", options: auth) == 0)
        #expect(await watch.waitUntil { $0.last { $0.topic == "flapd/hall/wall/state" }?.json?["text"] as? String == "SOMETHING ELSE" })
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/saved/set", "last-one", options: auth) == 0)
        #expect(await watch.waitUntil { $0.last { $0.topic == "flapd/hall/wall/state" }?.json?["text"] as? String == "THE LAST ONE" },
                "\(watch.seen.suffix(4)) \(flapd.stderr.suffix(1000))")
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/saved/set", "nope", options: auth) == 0)
        #expect(await watch.waitUntil { $0.contains { $0.topic == "flapd/hall/error" && ($0.json?["error"] as? String) == "no saved board 'nope'" } })
        #expect(try await mqttPublish(port: broker.port, topic: "flapd/hall/saved/delete", "last-one", options: auth) == 0)
        #expect(await watch.waitUntil { $0.last { $0.topic == select }?.json?["options"] as? [String] == [] })

        // A goodbye on SIGTERM: offline, retained.
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0, "\(flapd.stderr)")
        #expect(await watch.waitUntil { $0.last { $0.topic == "flapd/hall/availability" }?.payload == "offline" })
    }

    @Test(.timeLimit(.minutes(10))) func brokerRestartThenKill() async throws {
        let dir = try scratchDirectory("flap-mqtt-restart")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broker = try await MQTTBroker(dir: dir)
        defer { broker.stop() }
        let flapd = try FlapdProcess(["demo", "--config", try config(dir, broker: broker.port), "--plain", "--no-sound"])
        defer { kill(flapd.pid, SIGKILL) }
        _ = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        let first = try MQTTWatch(port: broker.port)
        #expect(await first.waitUntil(Self.announced), "\(first.seen)")
        first.stop()

        // The broker restarts with nothing retained: flapd finds it again and announces itself anew.
        try await broker.restart()
        #expect(await flapd.waitUntil { _, e in e.contains("MQTT: no connection to the broker") }, "\(flapd.stderr)")
        let again = try MQTTWatch(port: broker.port)
        defer { again.stop() }
        #expect(await again.waitUntil(Self.announced), "\(again.seen) \(flapd.stderr)")
        #expect(flapd.stderr.components(separatedBy: "MQTT connected").count >= 3, "\(flapd.stderr)")

        // Killed without a goodbye: the broker publishes the will.
        kill(flapd.pid, SIGKILL)
        _ = await flapd.waitForExit()
        #expect(await again.waitUntil { $0.last { $0.topic == "flapd/hall/availability" }?.payload == "offline" }, "\(again.seen.suffix(3))")
    }

    @Test(.timeLimit(.minutes(10))) func aWrongPasswordIsNamedAndTheWallGoesOn() async throws {
        let dir = try scratchDirectory("flap-mqtt-auth")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let passwd = try FlapdProcess(["-b", "-c", dir + "/passwd", "flapd", "right"], executable: "/usr/bin/mosquitto_passwd")
        #expect(await passwd.waitForExit() == 0)
        let broker = try await MQTTBroker(dir: dir, extra: "allow_anonymous false\npassword_file \(dir)/passwd\n")
        defer { broker.stop() }
        let flapd = try FlapdProcess(["demo", "--config", try config(dir, broker: broker.port, extra: "  username: flapd\n  password: wrong"), "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(await flapd.waitUntil { _, e in e.contains("not authorised") }, "\(flapd.stderr)")
        #expect(!flapd.stderr.contains("wrong"), "the password in the log")
        // The board does not depend on the broker.
        #expect(try await http("POST", port: port, body: Data(#"{"text":"still here"}"#.utf8)).status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?.contains("      STILL HERE      ") == true }, "\(flapd.stdout.suffix(800))")
    }

    @Test(.timeLimit(.minutes(10))) func overTLS() async throws {
        let dir = try scratchDirectory("flap-mqtt-tls")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A CA of the test's own, and the broker's certificate for 127.0.0.1, signed by it.
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: dir + "/san.ext", atomically: true, encoding: .utf8)
        for arguments in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=flapd test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext"],
        ] {
            let openssl = try FlapdProcess(arguments.map { ["ca.key", "ca.pem", "server.key", "server.csr", "server.pem", "san.ext"].contains($0) ? dir + "/" + $0 : $0 },
                                           executable: "/usr/bin/openssl")
            try #require(await openssl.waitForExit() == 0, "\(openssl.stderr)")
        }
        let broker = try await MQTTBroker(dir: dir, extra: "allow_anonymous true\ncafile \(dir)/ca.pem\ncertfile \(dir)/server.pem\nkeyfile \(dir)/server.key\n")
        defer { broker.stop() }
        let flapd = try FlapdProcess(["demo", "--config", try config(dir, broker: broker.port, extra: "  tls: { ca_file: \(dir)/ca.pem }"), "--plain", "--no-sound"])
        defer { flapd.terminate() }
        _ = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        let watch = try MQTTWatch(port: broker.port, options: ["--cafile", dir + "/ca.pem"])
        defer { watch.stop() }
        #expect(await watch.waitUntil(Self.announced), "\(watch.seen) \(flapd.stderr) \(broker.process.stderr)")
    }

    /// Each discovery message through Home Assistant's schema; one result object per message.
    func homeAssistantCheck(_ messages: [MQTTWatch.Seen], dir: String) async throws -> [[String: Any]] {
        let venv = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/venv", "ha"], executable: "/bin/bash")
        try #require(await venv.waitForSlowExit() == 0, "the Home Assistant venv: \(venv.stderr)")
        let python = venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let lines = try messages.map { m in
            String(decoding: try JSONSerialization.data(withJSONObject: ["topic": m.topic, "payload": m.json ?? [:]]), as: UTF8.self)
        }
        try lines.joined(separator: "\n").write(toFile: dir + "/discovery.jsonl", atomically: true, encoding: .utf8)
        let check = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/ha-discovery-check.py", dir + "/discovery.jsonl"], executable: python)
        try #require(await check.waitForSlowExit() == 0, "\(check.stderr)")
        return check.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }
}
