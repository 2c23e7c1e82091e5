import Foundation
import TestWaits
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PostgresTesting
import Testing

/// Where a hub keeps its store in a test: a SQLite file of its own, or a database of its own on
/// the test process's PostgreSQL server.
public enum HubEngine: String, CaseIterable, Sendable {
    case sqlite, postgres
}

/// A real flaphub on loopback with its own database, and the users a test needs.
public final class HubHarness: @unchecked Sendable {  // used by one test at a time
    public let directory: String
    public let database: String
    public let engine: HubEngine
    private let config: String
    private var fixedURL: String?
    public private(set) var process: FlapdProcess?
    public private(set) var port = 0
    /// Bearer tokens by username.
    public private(set) var tokens: [String: String] = [:]

    public static var executable: String {
        URL(fileURLWithPath: FlapdProcess.executable).deletingLastPathComponent().appendingPathComponent("flaphub").path
    }

    /// `config`: extra lines of flaphub's config file (limits). `postgres`: the server a
    /// PostgreSQL store is on (the process's shared one unless given).
    /// Async: a PostgreSQL store's database is made by psql (and the shared server, on first use,
    /// by initdb and pg_ctl) off the concurrency pool.
    public init(config: String = "", engine: HubEngine = .sqlite, postgres: PostgresServer? = nil, wait: Int = 120) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("flaphub-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.engine = engine
        self.config = config
        switch engine {
        case .sqlite: database = directory + "/hub.db"
        case .postgres:
            database = try await offPool {
                Result { () throws -> String in
                    let server = postgres ?? PostgresServer.shared
                    return server.address(try server.createDatabase(), wait: wait)
                }
            }.get()
        }
        try "database: \(database)\n\(config)\n".write(toFile: directory + "/flaphub.yaml", atomically: true, encoding: .utf8)
    }

    /// Another instance on the same database (PostgreSQL), with the same users; `url`: reached
    /// there (a proxy) rather than at its own port.
    public init(sharing other: HubHarness, url: String? = nil) throws {
        fixedURL = url
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("flaphub-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        (database, engine, config, tokens) = (other.database, other.engine, other.config, other.tokens)
        try "database: \(database)\n\(config)\n".write(toFile: directory + "/flaphub.yaml", atomically: true, encoding: .utf8)
    }

    /// The server stops with its harness (SIGTERM, then SIGKILL from the process's own deinit).
    deinit {
        process?.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs a flaphub admin command to its end; returns its stdout.
    @discardableResult
    public func admin(_ arguments: [String]) async throws -> String {
        let p = try FlapdProcess(arguments + ["--database", database], executable: Self.executable)
        let status = await p.waitForExit()
        guard status == 0 else { throw HarnessError("flaphub \(arguments) exited \(status): \(p.stderr)") }
        return p.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Creates users; each pair in `friends` becomes friends.
    public func users(_ names: [String], friends: [(String, String)]) async throws {
        for n in names { tokens[n] = try await admin(["user", "add", n]) }
        for (a, b) in friends { try await admin(["friend", "add", a, b]) }
    }

    /// Starts the server (on the port it had before, after a stop).
    public func start() async throws {
        let p = try FlapdProcess(["serve", "--port", "\(port)", "--config", directory + "/flaphub.yaml"], executable: Self.executable)
        let pattern = #"flaphub listening on http://[^:]+:(\d+)"#
        // On PostgreSQL, ready once it also hears the other instances' events.
        let shared = engine == .postgres
        _ = await p.waitUntil { _, e in
            e.range(of: pattern, options: .regularExpression) != nil && (!shared || e.contains("listening for every instance's events"))
        }
        let found = p.stderr.range(of: pattern, options: .regularExpression).flatMap { Int(p.stderr[$0].split(separator: ":").last!) }
        guard let found else { throw HarnessError("flaphub did not start: \(p.stderr)") }
        port = found
        process = p
    }

    public func stop() async {
        guard let p = process else { return }
        p.terminate()
        _ = await p.waitForExit()
        process = nil
    }

    public var url: String { fixedURL ?? "http://127.0.0.1:\(port)" }
    /// The PostgreSQL database's name (the address's path).
    public var databaseName: String { String(URL(string: database)?.path.dropFirst() ?? "") }

    /// One request to the hub as a user.
    public func request(_ method: String, _ path: String, as user: String, json body: Any? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: url + path)!)
        request.httpMethod = method
        request.setValue("Bearer \(tokens[user] ?? user)", forHTTPHeaderField: "Authorization")
        if let body { request.httpBody = try JSONSerialization.data(withJSONObject: body) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as! HTTPURLResponse).statusCode, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    /// Sends a message; returns its id for the (single) recipient.
    public func send(_ content: String, from sender: String, to recipient: String, unlockAt: Double? = nil) async throws -> String {
        var body: [String: Any] = ["recipients": [recipient], "content": content]
        if let unlockAt { body["unlockAt"] = unlockAt }
        let answer = try await request("POST", "/api/v1/messages", as: sender, json: body)
        let results = answer.json["results"] as? [[String: Any]]
        guard answer.status == 201, let id = results?.first?["messageID"] as? String else {
            throw HarnessError("send answered \(answer.status): \(answer.json)")
        }
        return id
    }

    /// A flapd config subscribing `board`'s user to this hub.
    public func flapdConfig(board: String, extra: String = "", url: String? = nil) throws -> String {
        let path = directory + "/flapd-\(UUID().uuidString).yaml"
        try """
            message_api: { url: "\(url ?? self.url)", token: "\(tokens[board]!)", ping_seconds: 2 }
            local_api: { port: 0 }
            sound: { enabled: false }
            timing: { flip_ms: 50, column_stagger_ms: 2, row_stagger_ms: 5 }
            \(extra)
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

extension FlapdProcess {
    /// Waits until the last frame printed satisfies `condition`.
    public func waitForFrame(_ condition: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        await waitUntil { out, _ in frames(in: out).last.map(condition) ?? false }
    }

    /// Waits until stderr holds `text` `count` times.
    public func waitForLog(_ text: String, count: Int = 1) async -> Bool {
        await waitUntil { _, e in e.components(separatedBy: text).count - 1 >= count }
    }
}

/// Board lines trimmed of blanks, without empty ones: what the board says.
public func words(_ frame: [String]) -> [String] {
    frame.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}

/// Events heard so far, shared with the socket tasks.
public final class Seen: Sendable {
    public let all = Mutex<[String]>([])
    public init() {}
}
