import FlapHubInput
import FlapInput
import FlapYAML
import Foundation
import Logging
import Yams

/// flaphub's config file (YAML): `database` (a SQLite file, or `postgres://user@host:port/name`
/// with its password in `database_password_file` or `database_password_env`), `bind`, `port`,
/// and the limits `message_ttl_seconds` (default 48 h), `messages_per_hour` (default 50, per
/// sender), `max_connections` (256), `max_connections_per_client` (32) and `ping_seconds` (how
/// often boards ping at the least; unset, their own).
public struct HubConfig: Sendable, Equatable {
    public var database = "flaphub.db"
    /// Where PostgreSQL's password is: a file (mode 600 or stricter) or an environment variable.
    public var passwordFile: String?
    public var passwordEnv: String?
    public var bind = "127.0.0.1"
    public var port = 8080
    public var limits = HubLimits()

    public init() {}

    /// Reads a config file; every problem is named with its key and line. The file is read
    /// within flapd's config's budget (`YAMLBudget`: 1 MiB, 32 levels, 100,000 nodes with its
    /// aliases expanded) before Yams composes it: a dozen lines of aliases used as mapping keys
    /// kept flaphub from starting for hours.
    public static func load(file: String) throws -> HubConfig {
        let bytes: [UInt8]
        do { bytes = try BoundedFile.read(file, maxBytes: YAMLBudget.maxBytes) } catch {
            throw HubError(1, "\(file): cannot read the file: \(error.reason)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw HubError(1, "\(file): not UTF-8") }
        if let (message, line) = YAMLBudget.problem(text) { throw HubError(1, "\(file): \(message)\(line.map { " (line \($0))" } ?? "")") }
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch { throw HubError(1, "\(file): not valid YAML: \(error)") }
        var config = HubConfig()
        var problems: [String] = []
        for (k, v) in root?.mapping ?? [:] {
            let key = k.string ?? "?"
            let line = "(line \(k.mark?.line ?? 0))"
            switch key {
            case "database": if let s = v.string { config.database = s } else { problems.append("database: expected a file path \(line)") }
            case "database_password_file": if let s = v.string { config.passwordFile = s } else { problems.append("database_password_file: expected a file path \(line)") }
            case "database_password_env":
                if let s = v.string, !s.isEmpty { config.passwordEnv = s } else { problems.append("database_password_env: expected a variable's name \(line)") }
            case "bind": if let s = v.string { config.bind = s } else { problems.append("bind: expected an address \(line)") }
            case "port":
                if let n = v.int, (0...65535).contains(n) { config.port = n } else { problems.append("port: '\(v.string ?? "?")' is outside 0…65535 \(line)") }
            case "message_ttl_seconds":
                if let n = v.int, (1...172_800).contains(n) { config.limits.messageTTL = Double(n) } else {
                    problems.append("message_ttl_seconds: '\(v.string ?? "?")' is outside 1…172800 \(line)")
                }
            case "max_connections", "max_connections_per_client":
                guard let n = v.int, (1...100_000).contains(n) else { problems.append("\(key): '\(v.string ?? "?")' is outside 1…100000 \(line)"); continue }
                if key == "max_connections" { config.limits.maxConnections = n } else { config.limits.maxConnectionsPerClient = n }
            case "ping_seconds":
                if let n = v.int, (1...300).contains(n) { config.limits.pingSeconds = n } else {
                    problems.append("ping_seconds: '\(v.string ?? "?")' is outside 1…300 \(line)")
                }
            case "messages_per_hour":
                if let n = v.int, (1...1_000_000).contains(n) { config.limits.messagesPerHour = n } else {
                    problems.append("messages_per_hour: '\(v.string ?? "?")' is outside 1…1000000 \(line)")
                }
            default: problems.append("\(key): unknown key (known here: bind, database, database_password_env, database_password_file, max_connections, max_connections_per_client, message_ttl_seconds, messages_per_hour, ping_seconds, port) \(line)")
            }
        }
        if root != nil, root?.mapping == nil { problems.append("expected a mapping of keys") }
        if PostgresSettings.isAddress(config.database), case .failure(let e) = PostgresSettings.parse(config.database) { problems.append(e.description) }
        guard problems.isEmpty else { throw HubError(1, "\(file):\n" + problems.map { "  " + $0 }.joined(separator: "\n")) }
        return config
    }
}

extension HubConfig {
    /// Runs `body` with the store's database open: PostgreSQL's pool works from before `body`
    /// until after it (then its connections close), a SQLite file stays open as long as it is
    /// held. Every problem of the address is named.
    public func withDatabase<T>(logger: Logger, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        let database = try await openDatabase(logger: logger)
        guard let postgres = database as? PostgresDatabase else { return try await body(database) }
        return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            group.addTask { await postgres.runPool() }
            defer { group.cancelAll() }
            return try await body(postgres)
        }
    }

    /// The store's database: PostgreSQL when `database` is its address (the password read now),
    /// else the SQLite file. (A PostgreSQL database's pool is not yet running: see `withDatabase`.)
    func openDatabase(logger: Logger) async throws -> any SQLDatabase {
        guard PostgresSettings.isAddress(database) else { return try await SQLiteDatabase.open(path: database) }
        var settings = try PostgresSettings.parse(database).get()
        if let name = passwordEnv {
            guard let p = ProcessInfo.processInfo.environment[name] else { throw HubError(1, "database_password_env: $\(name) is not set") }
            settings.password = p
        }
        if let file = passwordFile {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            guard let mode = (attributes?[.posixPermissions] as? NSNumber)?.intValue,
                  let bytes = try? BoundedFile.read(file, maxBytes: 64 << 10), let text = String(validating: bytes, as: UTF8.self) else {
                throw HubError(1, "database_password_file: cannot read \(file) (or it is not UTF-8 within 64 KiB)")
            }
            guard mode & 0o077 == 0 else {
                throw HubError(1, "database_password_file: \(file) is readable by others (mode \(String(mode, radix: 8))); chmod 600 it")
            }
            settings.password = text.trimmingCharacters(in: .newlines)
        }
        return PostgresDatabase(settings, logger: logger)
    }
}

/// How long messages live and how many a sender may send an hour.
public struct HubLimits: Sendable, Equatable {
    /// Seconds a message lives after it was sent (48 h, as the seed says; shorter for tests).
    public var messageTTL: Double = 48 * 3600
    public var messagesPerHour = MessageRules.sendsPerHour
    /// Connections open at once, in all and from one address (a board is one; behind a reverse
    /// proxy every connection comes from the proxy's address).
    public var maxConnections = 256
    public var maxConnectionsPerClient = 32
    /// How often a board should ping at the least, told in `authenticated` (`ping_seconds`): a
    /// board pings at the longer of this and its own. Each ping wakes the hub; 100,000 boards
    /// at flapd's 20 s are 5,000 a second. Nil: boards keep their own.
    public var pingSeconds: Int?
    public init() {}
}
