import CSQLite
import Synchronization

/// One SQLite database file (the default store). Statements outside a transaction share one
/// connection, one at a time; each transaction takes a connection of its own (`BEGIN
/// IMMEDIATE`: one writer at a time, in every process that opens the file). SQLite's calls never
/// suspend, so a transaction runs from its start to its end on one thread.
public final class SQLiteDatabase: SQLDatabase {
    public typealias Value = SQLValue
    public let path: String
    public var location: String { path }
    private let main: SQLiteConnection
    /// Connections that ran a transaction and wait for the next.
    private let idle = Mutex<[SQLiteConnection]>([])

    /// Opens (creating) the file; WAL journal, foreign keys on, 5 s busy timeout.
    public init(path: String) throws(SQLiteError) {
        self.path = path
        main = try SQLiteConnection(path: path)
    }

    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLValue]) throws(SQLiteError) -> [[SQLValue]] {
        try main.query(sql, parameters)
    }

    /// Runs statements without parameters or results.
    public func execute(_ sql: String) throws(SQLiteError) { try main.execute(sql) }

    public func transaction<T: Sendable>(lock: String? = nil, _ body: @escaping @Sendable (any SQLQuerying) async throws -> T) async throws -> T {
        let connection = try idle.withLock { $0.popLast() } ?? SQLiteConnection(path: path)
        defer { idle.withLock { if $0.count < 4 { $0.append(connection) } } }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let value = try await body(connection)
            try connection.execute("COMMIT")
            return value
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The version is the file's `user_version`; a file of version 0 with tables is version 1
    /// (its schema statements are `IF NOT EXISTS`).
    public func migrate(_ migrations: [Migration]) async throws {
        let current = try query("PRAGMA user_version", []).first?.first?.int ?? 0
        for m in migrations where m.version > current {
            try execute("BEGIN IMMEDIATE; \(m.sqlite) PRAGMA user_version = \(m.version); COMMIT;")
        }
    }
}

/// One connection to a SQLite file, used from any thread (one statement at a time).
final class SQLiteConnection: SQLQuerying {
    private let handle: Mutex<OpaquePointer?>

    init(path: String) throws(SQLiteError) {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw SQLiteError(message: "cannot open \(path): \(message)")
        }
        sqlite3_busy_timeout(db, 5000)
        handle = Mutex(db)
        try execute("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")
    }

    deinit { handle.withLock { sqlite3_close($0); $0 = nil } }

    func execute(_ sql: String) throws(SQLiteError) {
        try handle.withLock { (db: inout OpaquePointer?) throws(SQLiteError) in
            var error: UnsafeMutablePointer<CChar>?
            guard sqlite3_exec(db, sql, nil, nil, &error) == SQLITE_OK else {
                let message = error.map { String(cString: $0) } ?? "unknown error"
                sqlite3_free(error)
                throw SQLiteError(message: message)
            }
        }
    }

    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) throws(SQLiteError) -> [[SQLValue]] {
        try handle.withLock { (db: inout OpaquePointer?) throws(SQLiteError) -> [[SQLValue]] in
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
                throw SQLiteError(message: String(cString: sqlite3_errmsg(db)) + " in: \(sql)")
            }
            defer { sqlite3_finalize(statement) }
            for (i, p) in parameters.enumerated() {
                let index = Int32(i + 1)
                switch p {
                case .int(let v): sqlite3_bind_int64(statement, index, v)
                case .double(let v): sqlite3_bind_double(statement, index, v)
                case .text(let v): sqlite3_bind_text(statement, index, v, Int32(v.utf8.count), flap_sqlite_transient())  // every byte, NULs too
                case .null: sqlite3_bind_null(statement, index)
                }
            }
            var rows: [[SQLValue]] = []
            while true {
                let rc = sqlite3_step(statement)
                if rc == SQLITE_DONE { break }
                guard rc == SQLITE_ROW else { throw SQLiteError(message: String(cString: sqlite3_errmsg(db))) }
                rows.append((0..<sqlite3_column_count(statement)).map { c in
                    switch sqlite3_column_type(statement, c) {
                    case SQLITE_INTEGER: .int(sqlite3_column_int64(statement, c))
                    case SQLITE_FLOAT: .double(sqlite3_column_double(statement, c))
                    case SQLITE_NULL: .null
                    default: .text(String(cString: sqlite3_column_text(statement, c)))
                    }
                })
            }
            return rows
        }
    }
}

/// What SQLite said went wrong.
public struct SQLiteError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { "SQLite: \(message)" }
}
