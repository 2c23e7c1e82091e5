import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
import Synchronization

/// One SQLite database file (the default store), through SQLiteNIO: every call into SQLite runs
/// on NIO's thread pool, never on an event loop or the cooperative pool. One connection, and
/// one batch of work on it at a time (`SerialGate`): SQLite writes one at a time anyway, and so
/// no statement of this process ever waits on a lock this process holds — a thread of the pool
/// spent waiting could be the one the lock's holder needs. Other processes (`flaphub user add`
/// beside `flaphub serve`) wait up to the 5 s busy timeout (`BEGIN IMMEDIATE`).
///
/// Durable, with group commit: every commit reaches the disk (`synchronous = FULL`: a message
/// answered is there after a power cut), and what callers ask while one commits waits and goes
/// to the disk together, as one transaction — each transaction (or statement) in a savepoint
/// of its own, so one that fails is undone alone; each is answered only once its batch has
/// committed.
public final class SQLiteDatabase: SQLDatabase {
    public let path: String
    public var location: String { path }
    private let connection: SQLiteStatements
    /// Connections that only read (`query_only`), taken in turn.
    private let readers: [SQLiteStatements]
    private let nextReader = Atomic<UInt>(0)
    private let gate = SerialGate()
    /// Work waiting for the next batch, in the order it came.
    private let queue = Mutex<[GroupCommitJob]>([])
    /// How many batches have been committed (or tried): fewer than the transactions under load.
    let batches = Atomic<Int>(0)
    /// How many transactions wait for the next batch.
    var queued: Int { queue.withLock { $0.count } }

    private init(path: String, connection: SQLiteStatements, readers: [SQLiteStatements]) {
        self.path = path
        self.connection = connection
        self.readers = readers
    }

    /// Opens (creating) the file; WAL journal, each commit synced, foreign keys on, 5 s busy
    /// timeout; and two reader connections.
    public static func open(path: String) async throws -> SQLiteDatabase {
        let writer = try await SQLiteStatements(path: path)
        let readers = [try await SQLiteStatements(path: path, readOnly: true), try await SQLiteStatements(path: path, readOnly: true)]
        return SQLiteDatabase(path: path, connection: writer, readers: readers)
    }

    /// A `SELECT` is read on a reader connection of its own, beside the batches (WAL: it sees
    /// every commit made before it began, never a batch in progress); any other statement is a
    /// job of the next batch, and fails alone (SQLite undoes a failed statement).
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLValue]) async throws -> [[SQLValue]] {
        if Self.reads(sql) {
            return try await readers[Int(nextReader.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(readers.count))].query(sql, parameters)
        }
        return try await group(savepoint: false) { db in try await db.query(sql, parameters) }
    }

    /// Whether `sql` only reads: a single `SELECT`.
    static func reads(_ sql: String) -> Bool {
        sql.utf8.prefix(6).map { $0 & 0xDF } == Array("SELECT".utf8) && !sql.contains(";")
    }

    /// `body` must run its statements on the connection it is given (this database's own would
    /// wait for the batch it is in to end). `lock` is not needed: the batches are one at a time.
    public func transaction<T: Sendable>(lock: String? = nil, _ body: @escaping @Sendable (any SQLQuerying) async throws -> T) async throws -> T {
        try await group(savepoint: true, body)
    }

    /// `body` as a job of the next batch; in a savepoint of its own unless it is one statement.
    private func group<T: Sendable>(savepoint: Bool, _ body: @escaping @Sendable (any SQLQuerying) async throws -> T) async throws -> T {
        // What it made, once it ran; why it did not happen is the job's `failure` alone.
        let made = Mutex<T?>(nil)
        let job = GroupCommitJob(savepoint: savepoint) { db in
            let value = try await body(db)
            made.withLock { $0 = value }
        }
        queue.withLock { $0.append(job) }
        // Whoever holds the gate commits everything queued by then — this job too, unless an
        // earlier holder took it.
        try await gate.run {
            let jobs = queue.withLock { q in defer { q = [] }; return q }
            if !jobs.isEmpty { await commit(jobs) }
        }
        if let failed = job.failure { throw failed }
        guard let value = made.withLock({ $0 }) else { throw DatabaseUnavailable(cause: "a batch ended without this transaction") }
        return value
    }

    /// One transaction for `jobs`, each in a savepoint (undone alone when it throws); each job
    /// is told its fate once the COMMIT has returned (or failed: then none of them happened).
    private func commit(_ jobs: [GroupCommitJob]) async {
        batches.add(1, ordering: .relaxed)
        do {
            try await connection.query("BEGIN IMMEDIATE", [])
        } catch {
            for job in jobs { job.failure = error }
            return
        }
        for job in jobs {
            do {
                guard job.savepoint else {
                    do { try await job.body(connection) } catch { job.failure = error }
                    continue
                }
                try await connection.query("SAVEPOINT job", [])
                do {
                    try await job.body(connection)
                    try await connection.query("RELEASE job", [])
                } catch {
                    job.failure = error
                    try await connection.query("ROLLBACK TO job", [])
                    try await connection.query("RELEASE job", [])
                }
            } catch {
                // The savepoint itself failed: the transaction cannot be trusted; none of it commits.
                _ = try? await connection.query("ROLLBACK", [])
                for job in jobs where job.failure == nil { job.failure = error }
                return
            }
        }
        do {
            try await connection.query("COMMIT", [])
        } catch {
            _ = try? await connection.query("ROLLBACK", [])
            for job in jobs where job.failure == nil { job.failure = error }
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

/// One transaction (or statement) of a group commit: its work, and — once its batch is over —
/// why it did not happen, if it did not. (`@unchecked Sendable`: `failure` is written by the
/// gate's holder and read by the job's caller after the gate is released.)
final class GroupCommitJob: @unchecked Sendable {
    let savepoint: Bool
    let body: @Sendable (any SQLQuerying) async throws -> Void
    var failure: (any Error)?
    init(savepoint: Bool, _ body: @escaping @Sendable (any SQLQuerying) async throws -> Void) {
        self.savepoint = savepoint
        self.body = body
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

    /// `readOnly`: the connection refuses to write (`query_only`).
    init(path: String, readOnly: Bool = false) async throws {
        connection = try await SQLiteConnection.open(storage: .file(path: path), logger: Logger(label: "flaphub.sqlite"))
        do {
            // The busy timeout replaces SQLiteNIO's wait-forever busy handler: a file held by
            // another writer for 5 s is an error, not a hang.
            let mode = readOnly ? ["PRAGMA query_only = ON"] : ["PRAGMA journal_mode = WAL", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = FULL"]
            for pragma in ["PRAGMA busy_timeout = 5000"] + mode {
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
