import FlapHubInput
import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// A PostgreSQL database through postgres-nio's connection pool, shared by every flaphub
/// instance that names it. Its pool works while `runPool()` runs — for the server, in the scope
/// of `HubConfig.withDatabase`, from before the store migrates until after the server has stopped.
/// A query the server cannot answer (down, restarting, unreachable past the connect timeout)
/// throws `DatabaseUnavailable`, which the API answers 503.
public final class PostgresDatabase: SQLDatabase {
    let client: PostgresClient
    let logger: Logger
    public let location: String

    public init(_ settings: PostgresSettings, logger: Logger) {
        var c = PostgresClient.Configuration(host: settings.host, port: settings.port, username: settings.username,
                                             password: settings.password, database: settings.database, tls: settings.tls.client)
        c.options.connectTimeout = .seconds(5)
        c.options.maximumConnections = settings.maxConnections
        let client = PostgresClient(configuration: c, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        deadline = settings.wait
        location = settings.description
    }

    /// Runs the connection pool until the task is cancelled; then closes every connection.
    public func runPool() async {
        await client.run()
    }

    /// How long a statement or transaction may wait for a connection and its answer (the
    /// address's `wait`, 5 s): the pool itself waits a minute before it gives up on a server
    /// that refuses connections.
    let deadline: Duration

    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLValue]) async throws -> [[SQLValue]] {
        try await query(Self.statement(sql, parameters))
    }

    /// One statement as postgres-nio writes it (binds of any type it encodes: arrays), bounded
    /// (by `within` when its caller has waited part of the address's wait already) and its
    /// failures said as `query`'s are.
    @discardableResult
    func query(_ statement: PostgresQuery, within: Duration? = nil) async throws -> [[SQLValue]] {
        let (client, logger) = (client, logger)
        return try await Self.bounded(within ?? deadline) {
            try await Self.unavailable { try await client.withConnection { try await Connection(connection: $0, logger: logger).query(statement) } }
        }
    }

    public func transaction<T: Sendable>(lock: String? = nil, _ body: @escaping @Sendable (any SQLQuerying) async throws -> T) async throws -> T {
        let (client, logger) = (client, logger)
        return try await Self.bounded(deadline) { try await Self.unavailable {
            try await client.withConnection { connection in
                let c = Connection(connection: connection, logger: logger)
                try await c.query("BEGIN")
                let value: T
                do {
                    if let lock { try await c.query("SELECT pg_advisory_xact_lock(hashtext(?))", [.text(lock)]) }
                    value = try await body(c)
                } catch {
                    // A session the server ended (a shutdown, a lost connection) has no
                    // transaction left to roll back.
                    if !Self.sessionEnded(error) { _ = try? await c.query("ROLLBACK") }
                    throw error
                }
                try await c.query("COMMIT")
                return value
            }
        } }
    }

    /// Whether `error` ended the session: the server terminated it (08: connection exception,
    /// 57: operator intervention — a shutdown or restart) or the connection went.
    static func sessionEnded(_ error: any Error) -> Bool {
        if error is DatabaseUnavailable { return true }
        guard let e = error as? PSQLError else { return false }
        switch e.code {
        case .server:
            let state = e.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57")
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed: return true
        default: return false
        }
    }

    /// Runs `body` for at most `deadline`; past it, cancels it and throws `DatabaseUnavailable`.
    static func bounded<T: Sendable>(_ deadline: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard deadline > .zero else { throw DatabaseUnavailable(cause: "no time left to wait") }
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: deadline)
                throw DatabaseUnavailable(cause: "no answer within \(deadline)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Versions in `flaphub_schema`; instances that start together migrate one after another.
    public func migrate(_ migrations: [Migration]) async throws {
        let logger = logger
        try await transaction(lock: "flaphub.migrate") { c in
            try await c.query("CREATE TABLE IF NOT EXISTS flaphub_schema(version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)")
            let current = try await c.query("SELECT coalesce(max(version), 0) FROM flaphub_schema").first?.first?.int ?? 0
            for m in migrations where m.version > current {
                for statement in Migration.statements(m.postgres) { try await c.query(statement) }
                try await c.query("INSERT INTO flaphub_schema(version, applied_at) VALUES(?, ?)",
                                  [.int(Int64(m.version)), .double(Date().timeIntervalSince1970)])
                logger.notice("database schema now version \(m.version)")
            }
        }
    }

    /// Sends `payloads`, in order, to every session that listens on `channel`: one statement.
    public func notify(_ channel: String, _ payloads: [String]) async throws {
        guard !payloads.isEmpty else { return }
        var binds = PostgresBindings(capacity: 2)
        binds.append(channel)
        binds.append(payloads)
        try await query(PostgresQuery(unsafeSQL: "SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS n(p, i) ORDER BY i", binds: binds))
    }

    /// Calls `receive` with each notification on `channel`, on a connection of its own, until
    /// the connection ends (then throws).
    public func listen(_ channel: String, started: () async -> Void, receive: (String) async -> Void) async throws {
        try await Self.unavailable {
            try await client.withConnection { connection in
                try await connection.listen(on: channel) { notifications in
                    await started()
                    for try await n in notifications { await receive(n.payload) }
                }
            }
        }
    }

    /// One leased connection (inside a transaction, or for one statement). A statement is
    /// written on the connection's event loop, and only while it is open: postgres-nio 1.33
    /// drops a statement written to a closed connection without ever answering it — nor does its
    /// wait heed cancellation — so a connection the server had just ended (a shutdown) kept its
    /// request past the address's wait, until the front door's 408.
    struct Connection: SQLQuerying {
        let connection: PostgresConnection
        let logger: Logger
        @discardableResult
        func query(_ sql: String, _ parameters: [SQLValue]) async throws -> [[SQLValue]] {
            try await query(PostgresDatabase.statement(sql, parameters))
        }

        func query(_ statement: PostgresQuery) async throws -> [[SQLValue]] {
            let (connection, logger) = (connection, logger)
            let result = try await connection.eventLoop.flatSubmit { () -> EventLoopFuture<PostgresQueryResult> in
                guard !connection.isClosed else {
                    return connection.eventLoop.makeFailedFuture(DatabaseUnavailable(cause: "the connection had closed"))
                }
                return connection.query(statement, logger: logger)
            }.get()
            return try result.rows.map(PostgresDatabase.values)
        }
    }

    /// `?` placeholders become `$1`, `$2`, …; values are bound, never spliced into the text.
    static func statement(_ sql: String, _ parameters: [SQLValue]) -> PostgresQuery {
        var text = ""
        var n = 0
        for c in sql {
            if c == "?" { n += 1; text += "$\(n)" } else { text.append(c) }
        }
        var binds = PostgresBindings(capacity: parameters.count)
        for p in parameters {
            switch p {
            case .int(let v): binds.append(v)
            case .double(let v): binds.append(v)
            case .text(let v): binds.append(v)
            case .null: binds.appendNull()
            }
        }
        return PostgresQuery(unsafeSQL: text, binds: binds)
    }

    /// A row's cells as SQL values.
    static func values(_ row: PostgresRow) throws -> [SQLValue] {
        try row.map { cell in
            guard cell.bytes != nil else { return .null }
            switch cell.dataType {
            case .int2, .int4, .int8: return .int(try cell.decode(Int64.self))
            case .float4, .float8: return .double(try cell.decode(Double.self))
            case .bool: return .int(try cell.decode(Bool.self) ? 1 : 0)
            case .void: return .null
            default: return .text(try cell.decode(String.self))
            }
        }
    }

    /// Runs `body`; a failure of the connection rather than of the statement becomes
    /// `DatabaseUnavailable` (its cause kept as words).
    static func unavailable<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let e as PSQLError {
            let state = e.serverInfo?[.sqlState] ?? ""
            // 53: out of resources (too many connections, no memory or disk): the session may live on.
            if sessionEnded(e) || state.hasPrefix("53") || e.code == .listenFailed {
                throw DatabaseUnavailable(cause: e.code == .server ? "\(e.serverInfo?[.message] ?? "server error") (\(state))" : "\(e.code)")
            }
            throw SQLFailure(message: e.code == .server ? "\(e.serverInfo?[.message] ?? "server error") (SQLSTATE \(state))" : "\(e.code)",
                             sqlState: e.code == .server ? state : nil)
        } catch where String(describing: type(of: error)) == "ConnectionPoolError" {
            // The pool's error type is in a module postgres-nio does not export: no connection could be made or leased.
            throw DatabaseUnavailable(cause: "no connection (\(error))")
        }
    }
}

/// What PostgreSQL said went wrong with a statement (its SQLSTATE kept as data).
public struct SQLFailure: Error, CustomStringConvertible {
    public let message: String
    public let sqlState: String?
    public var description: String { "PostgreSQL: \(message)" }
    /// A unique or primary key was already taken.
    public var isUniqueViolation: Bool { sqlState == "23505" }
}

extension PostgresSettings.TLSMode {
    /// postgres-nio's TLS for this `sslmode`.
    var client: PostgresClient.Configuration.TLS {
        switch self {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }
}
