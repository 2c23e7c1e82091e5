import Foundation
import PostgresTesting

/// A real Mosquitto broker (Debian's `mosquitto`) on a loopback port, started by the test, with
/// what a test gives it in its config (a password file, a TLS listener); stopped with the test.
public final class MQTTBroker: @unchecked Sendable {
    public let port: Int
    public let dir: String
    public let extra: String
    public private(set) var process: FlapdProcess

    public static let executable = "/usr/sbin/mosquitto"

    public init(dir: String, port: Int? = nil, extra: String = "allow_anonymous true\n") async throws {
        self.dir = dir
        self.port = try port ?? freeLoopbackPort()
        self.extra = extra
        process = try await Self.start(dir: dir, port: self.port, extra: extra)
    }

    /// As root, the broker would switch to the user `mosquitto`, who cannot read the test's files.
    private static func start(dir: String, port: Int, extra: String) async throws -> FlapdProcess {
        let conf = "\(dir)/mosquitto.conf"
        try "listener \(port) 127.0.0.1\npersistence false\nlog_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\n\(geteuid() == 0 ? "user root\n" : "")\(extra)"
            .write(toFile: conf, atomically: true, encoding: .utf8)
        let broker = try FlapdProcess(["-c", conf], executable: executable)
        guard await broker.waitUntil({ _, e in e.contains(" running") }) else {
            throw BrokerError(description: "mosquitto did not start: \(broker.stderr)")
        }
        return broker
    }

    /// Stops the broker (SIGTERM) and starts it again on the same port, with nothing retained.
    public func restart() async throws {
        process.terminate()
        _ = await process.waitForExit()
        process = try await Self.start(dir: dir, port: port, extra: extra)
    }

    public func stop() { process.terminate() }

    public struct BrokerError: Error, CustomStringConvertible { public let description: String }
}

/// `mosquitto_sub` on a topic filter, every message one JSON line (`-F %j`): what a subscriber
/// on the broker sees, in order, retained flags included.
public final class MQTTWatch: @unchecked Sendable {
    public struct Seen: Sendable, Equatable {
        public var topic: String
        public var payload: String
        public var retained: Bool
        public init(topic: String, payload: String, retained: Bool) { self.topic = topic; self.payload = payload; self.retained = retained }
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any] }
        public static func == (a: Seen, b: Seen) -> Bool { a.topic == b.topic && a.payload == b.payload && a.retained == b.retained }
    }
    public let process: FlapdProcess

    public init(port: Int, filter: String = "#", options: [String] = []) throws {
        process = try FlapdProcess(["-h", "127.0.0.1", "-p", "\(port)", "-t", filter, "-F", "%j", "-q", "1"] + options,
                                   executable: "/usr/bin/mosquitto_sub")
    }

    public static func parse(_ output: String) -> [Seen] {
        output.split(separator: "\n").compactMap { line in
            guard let o = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], let topic = o["topic"] as? String else { return nil }
            return Seen(topic: topic, payload: o["payload"] as? String ?? "", retained: o["retain"] as? Bool ?? false)
        }
    }

    public var seen: [Seen] { Self.parse(process.stdout) }

    /// Waits until what was seen satisfies `condition` (bounded against a hang).
    @discardableResult
    public func waitUntil(_ condition: @escaping @Sendable ([Seen]) -> Bool) async -> Bool {
        await process.waitUntil { o, _ in condition(Self.parse(o)) }
    }

    public func stop() { process.terminate() }
}

/// Publishes one message with `mosquitto_pub` (nil: the payload is in `options`, `-f FILE`); returns its exit status.
@discardableResult
public func mqttPublish(port: Int, topic: String, _ payload: String?, options: [String] = []) async throws -> Int32 {
    let pub = try FlapdProcess(["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-q", "1"] + (payload.map { ["-m", $0] } ?? []) + options,
                               executable: "/usr/bin/mosquitto_pub")
    return await pub.waitForExit()
}

