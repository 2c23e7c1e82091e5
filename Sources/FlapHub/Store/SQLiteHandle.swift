import CSQLite
import NIOPosix
import Synchronization

/// One SQLite connection (Debian's libsqlite3), used by one caller at a time: statements run on
/// the calling thread, each compiled once and kept (at most `cachedStatements` of them), values
/// in and out as `SQLValue`. It blocks while SQLite works — a write waits up to the 5 s busy
/// timeout for another process, a commit for the disk — so `SQLiteDatabase` calls it on NIO's
/// thread pool, but for the statements of a batch between its `BEGIN IMMEDIATE` and its
/// `COMMIT` (taken on the pool): those neither wait for a lock nor sync, and run where the
/// batch runs. Why not SQLiteNIO: each of its statements is compiled again and makes three trips
/// (the pool, the event loop, the task) — with group commit those trips, not the disk, bounded
/// flaphub (882 sends a second, 1.09 ms of processor time each). (`@unchecked Sendable`: the
/// handle and its statements are only touched under `lock`.)
final class SQLiteHandle: @unchecked Sendable {
    private let db: OpaquePointer
    private let lock = Mutex<Void>(())
    private var statements: [String: OpaquePointer] = [:]
    static let cachedStatements = 128

    /// A failure of SQLite's, with its result code and the statement it came from.
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        let message: String
        let sql: String
        var description: String { "SQLite error \(code) (\(message)) in \(sql.prefix(120))" }
    }

    /// SQLite configured once, before the first connection (`csqlite_configure`).
    private static let configured: Int32 = csqlite_configure()

    /// Opens the file (creating it) and runs `pragmas` on it.
    static func open(path: String, pragmas: [String]) throws -> SQLiteHandle {
        _ = configured
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw Failure(code: rc, message: message, sql: "open \(path)")
        }
        sqlite3_extended_result_codes(db, 1)
        let handle = SQLiteHandle(db)
        for pragma in pragmas { _ = try handle.run(pragma, []) }
        return handle
    }

    private init(_ db: OpaquePointer) { self.db = db }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    /// Runs one statement (the first of `sql`) with `parameters` bound, returning its rows.
    /// SQLite's busy and locked results (another process kept the file past the busy timeout)
    /// are `DatabaseUnavailable`: the request may be tried again.
    func run(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]] {
        try lock.withLock { _ in try step(sql, parameters) }
    }

    /// The statement run; the caller holds `lock`.
    private func step(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]] {
        let statement = try prepared(sql)
        defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
        for (i, value) in parameters.enumerated() { try bind(value, at: Int32(i + 1), in: statement, sql) }
        var rows: [[SQLValue]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return rows }
            guard rc == SQLITE_ROW else { throw failure(rc, sql) }
            rows.append((0..<sqlite3_column_count(statement)).map { column(statement, $0) })
        }
    }

    /// `run`, unless another caller is using the connection: then nil, at once.
    func runIfFree(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]]? {
        try lock.withLockIfAvailable { _ in try step(sql, parameters) }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw failure(rc, sql) }
        if statements.count >= Self.cachedStatements {
            for old in statements.values { sqlite3_finalize(old) }
            statements = [:]
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ value: SQLValue, at i: Int32, in statement: OpaquePointer, _ sql: String) throws {
        let rc: Int32
        switch value {
        case .int(let v): rc = sqlite3_bind_int64(statement, i, v)
        case .double(let v): rc = sqlite3_bind_double(statement, i, v)
        case .null: rc = sqlite3_bind_null(statement, i)
        case .text(var v):
            // Bound with its length: every byte, NULs too.
            rc = v.withUTF8 { bytes in
                guard let start = bytes.baseAddress else { return sqlite3_bind_text(statement, i, "", 0, csqlite_transient()) }
                return sqlite3_bind_text(statement, i, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), Int32(bytes.count), csqlite_transient())
            }
        }
        guard rc == SQLITE_OK else { throw failure(rc, sql) }
    }

    private func column(_ statement: OpaquePointer, _ i: Int32) -> SQLValue {
        switch sqlite3_column_type(statement, i) {
        case SQLITE_INTEGER: return .int(sqlite3_column_int64(statement, i))
        case SQLITE_FLOAT: return .double(sqlite3_column_double(statement, i))
        case SQLITE_NULL: return .null
        default:  // text, or a blob read as text
            guard let bytes = sqlite3_column_blob(statement, i) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, i))
            return .text(String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self))
        }
    }

    private func failure(_ rc: Int32, _ sql: String) -> any Error {
        let message = String(cString: sqlite3_errmsg(db))
        switch rc & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return DatabaseUnavailable(cause: "the SQLite file is held by another process (\(message))")
        default:
            return Failure(code: rc, message: message, sql: sql)
        }
    }
}

/// A `SQLiteHandle` as `SQLQuerying`: each statement on NIO's thread pool (`onThePool`), or
/// where the caller runs (the statements inside a batch).
struct SQLiteStatements: SQLQuerying {
    let handle: SQLiteHandle
    let onThePool: Bool

    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) async throws -> [[SQLValue]] {
        guard onThePool else { return try handle.run(sql, parameters) }
        return try await NIOThreadPool.singleton.runIfActive { [handle] in try handle.run(sql, parameters) }
    }
}
