import CSQLite
import Synchronization

/// One SQLite database file, used from any thread (one statement at a time).
public final class SQLiteDatabase: Sendable {
    /// A value in or out of SQLite.
    public enum Value: Hashable, Sendable {
        case int(Int64), double(Double), text(String), null

        public var int: Int64? { if case .int(let v) = self { v } else { nil } }
        public var double: Double? {
            switch self { case .double(let v): v; case .int(let v): Double(v); default: nil }
        }
        public var text: String? { if case .text(let v) = self { v } else { nil } }
    }

    private let handle: Mutex<OpaquePointer?>
    public let path: String

    /// Opens (creating) the file; WAL journal, foreign keys on, 5 s busy timeout.
    public init(path: String) throws(SQLiteError) {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw SQLiteError(message: "cannot open \(path): \(message)")
        }
        sqlite3_busy_timeout(db, 5000)
        self.path = path
        handle = Mutex(db)
        try execute("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")
    }

    deinit { handle.withLock { sqlite3_close($0); $0 = nil } }

    /// Runs statements without parameters or results.
    public func execute(_ sql: String) throws(SQLiteError) {
        try handle.withLock { (db: inout OpaquePointer?) throws(SQLiteError) in
            var error: UnsafeMutablePointer<CChar>?
            guard sqlite3_exec(db, sql, nil, nil, &error) == SQLITE_OK else {
                let message = error.map { String(cString: $0) } ?? "unknown error"
                sqlite3_free(error)
                throw SQLiteError(message: message)
            }
        }
    }

    /// Runs one statement with parameters and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [Value] = []) throws(SQLiteError) -> [[Value]] {
        try handle.withLock { (db: inout OpaquePointer?) throws(SQLiteError) -> [[Value]] in
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
            var rows: [[Value]] = []
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

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// What SQLite said went wrong.
public struct SQLiteError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { "SQLite: \(message)" }
}
