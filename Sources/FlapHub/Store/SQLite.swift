import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
import Synchronization

/// One SQLite database file (the default store), through SQLiteNIO: every call into SQLite runs
/// on NIO's thread pool, never on an event loop or the cooperative pool. One connection, and one
/// statement or transaction on it at a time, in turn (`SerialGate`): SQLite writes one at a time
/// anyway, and so no statement of this process ever waits on a lock this process holds — a
/// thread of the pool spent waiting could be the one the lock's holder needs. Other processes
/// (`flaphub user add` beside `flaphub serve`) wait up to the 5 s busy timeout (`BEGIN IMMEDIATE`).
public final class SQLiteDatabase: SQLDatabase {
    public let path: String
    public var location: String { path }
    private let connection: SQLiteStatements
    private let gate = SerialGate()

    private init(path: String, connection: SQLiteStatements) {
        self.path = path
        self.connection = connection
    }

    /// Opens (creating) the file; WAL journal, foreign keys on, 5 s busy timeout.
    public static func open(path: String) async throws -> SQLiteDatabase {
        SQLiteDatabase(path: path, connection: try await SQLiteStatements(path: path))
    }

    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLValue]) async throws -> [[SQLValue]] {
        try await gate.run { try await self.connection.query(sql, parameters) }
    }

    /// `body` must run its statements on the connection it is given (this database's own would
    /// wait for the transaction to end).
    public func transaction<T: Sendable>(lock: String? = nil, _ body: @escaping @Sendable (any SQLQuerying) async throws -> T) async throws -> T {
        try await gate.run {
            try await self.connection.query("BEGIN IMMEDIATE", [])
            do {
                let value = try await body(self.connection)
                try await self.connection.query("COMMIT", [])
                return value
            } catch {
                _ = try? await self.connection.query("ROLLBACK", [])
                throw error
            }
        }
    }

    /// The version is the file's `user_version`; a file of version 0 with tables is version 1
    /// (its schema statements are `IF NOT EXISTS`). Each version's statements and its number are
    /// one transaction.
    public func migrate(_ migrations: [Migration]) async throws {
        let current = try await query("PRAGMA user_version", []).first?.first?.int ?? 0
        for m in migrations where m.version > current {
            try await transaction { db in
                for statement in Self.statements(m.sqlite) { try await db.query(statement, []) }
                try await db.query("PRAGMA user_version = \(m.version)", [])
            }
        }
    }

    /// The statements of a migration's script, split at its semicolons (the schema's statements
    /// hold no semicolon of their own).
    static func statements(_ script: String) -> [String] {
        script.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }
}

/// One holder at a time, in the order they came, waiting without holding a thread.
final class SerialGate: Sendable {
    private let state = Mutex<(held: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s in
                if s.held { s.waiting.append(c); return false }
                s.held = true
                return true
            }
            if now { c.resume() }
        }
        defer {
            let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
                if s.waiting.isEmpty { s.held = false; return nil }
                return s.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}

/// One SQLiteNIO connection as `SQLQuerying`: values in and out as `SQLValue`.
final class SQLiteStatements: SQLQuerying {
    private let connection: SQLiteConnection

    init(path: String) async throws {
        connection = try await SQLiteConnection.open(storage: .file(path: path), logger: Logger(label: "flaphub.sqlite"))
        do {
            // The busy timeout replaces SQLiteNIO's wait-forever busy handler: a file held by
            // another writer for 5 s is an error, not a hang.
            for pragma in ["PRAGMA busy_timeout = 5000", "PRAGMA journal_mode = WAL", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL"] {
                _ = try await connection.query(pragma, [])
            }
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// A connection no one holds is closed on the thread pool (the close keeps it until then).
    deinit { _ = connection.close() as EventLoopFuture<Void> }

    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) async throws -> [[SQLValue]] {
        let binds: [SQLiteData] = parameters.map {
            switch $0 {
            case .int(let v): .integer(Int(v))
            case .double(let v): .float(v)
            case .text(let v): .text(v)  // bound with its length: every byte, NULs too
            case .null: .null
            }
        }
        return try await connection.query(sql, binds).map { row in
            row.columns.map { column in
                switch column.data {
                case .integer(let v): .int(Int64(v))
                case .float(let v): .double(v)
                case .text(let v): .text(v)
                case .blob(let b): .text(String(buffer: b))
                case .null: .null
                }
            }
        }
    }
}
