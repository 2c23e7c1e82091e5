import Foundation
import NIOPosix
import Synchronization

/// One SQLite database file (the default store), through Debian's libsqlite3 (`SQLiteHandle`):
/// what waits long (a batch's `BEGIN IMMEDIATE` on another process's lock, its `COMMIT` on the
/// disk) runs on NIO's thread pool, never on an event loop; a batch's statements and the reads
/// run where their caller runs (a read waits at most 1 s, for a crashed process's file to be
/// recovered). One writer connection, and one batch of work on it at a time (group commit, below):
/// SQLite writes one at a time anyway, and so no statement of this process ever waits on a lock
/// this process holds — a thread of the pool spent waiting could be the one the lock's holder
/// needs. Other processes (`flaphub user add` beside `flaphub serve`) wait up to the 5 s busy
/// timeout (`BEGIN IMMEDIATE`), then are told the database is unavailable.
///
/// Durable, with group commit: every commit reaches the disk (`synchronous = FULL`: a message
/// answered is there after a power cut), and what callers ask while one commits waits and goes
/// to the disk together, as one transaction — each transaction (or statement) in a savepoint
/// of its own, so one that fails is undone alone; each is answered only once its batch has
/// committed.
public final class SQLiteDatabase: SQLDatabase {
    public let path: String
    public var location: String { path }
    /// The one connection that writes: its batch's `BEGIN IMMEDIATE` and `COMMIT` on the pool,
    /// the statements between them where the batch runs (`SQLiteHandle`).
    private let writer: SQLiteHandle
    /// Connections that only read (`query_only`): a `SELECT` runs where its caller runs, on the
    /// first of them no one is using (or, if all are, the next in turn).
    private let readers: [SQLiteHandle]
    private let nextReader = Atomic<UInt>(0)
    /// Work waiting for the next batch, and whether a batch is being committed.
    private let batch = GroupCommit<GroupCommitJob>()
    /// How many batches have been committed (or tried): fewer than the transactions under load.
    let batches = Atomic<Int>(0)
    /// How many transactions wait for the next batch.
    var queued: Int { batch.queued }

    private init(path: String, writer: SQLiteHandle, readers: [SQLiteHandle]) {
        self.path = path
        self.writer = writer
        self.readers = readers
    }

    /// Reader connections: one for each thread that runs tasks, and one more.
    static let readerCount = ProcessInfo.processInfo.activeProcessorCount + 1
    /// The writer's page cache, in KiB (SQLite's default is 2,000): every send adds an entry to
    /// indexes by recipient and by sender, each at its own place in the index, and the pages of
    /// those places did not stay in 2 MB — the writer read them again from the file (issue 37).
    static let writerCacheKiB = 32 * 1024
    /// How long a read waits for the file: in WAL a read waits for no writer, only for another
    /// process recovering the file after a crash — briefly, since the read holds its thread.
    static let readerBusyMilliseconds = 1000

    /// Opens (creating) the file; WAL journal, each commit synced, foreign keys on, 5 s busy
    /// timeout; and the reader connections. The writer keeps its savepoints' journals and its
    /// temporary tables in memory (`temp_store`: on a file, each batch's savepoints and a
    /// delivery batch's `RETURNING` opened, wrote and unlinked a file — a file a message), and
    /// copies the WAL into the database every 10,000 pages (40 MB) rather than SQLite's 1,000:
    /// the pages a busy hub writes again and again (the ends of the tables, an index's hot
    /// leaves) are copied once for more commits. Neither changes what is on the disk at a commit.
    public static func open(path: String) async throws -> SQLiteDatabase {
        try await NIOThreadPool.singleton.runIfActive {
            let writer = try SQLiteHandle.open(path: path, pragmas: ["PRAGMA busy_timeout = 5000", "PRAGMA journal_mode = WAL",
                                                                "PRAGMA foreign_keys = ON", "PRAGMA synchronous = FULL",
                                                                "PRAGMA temp_store = MEMORY", "PRAGMA wal_autocheckpoint = 10000",
                                                                "PRAGMA cache_size = -\(writerCacheKiB)"])
            let readers = try (0..<readerCount).map { _ in
                try SQLiteHandle.open(path: path, pragmas: ["PRAGMA busy_timeout = \(readerBusyMilliseconds)", "PRAGMA query_only = ON"])
            }
            return SQLiteDatabase(path: path, writer: writer, readers: readers)
        }
    }

    /// A `SELECT` is read on a reader connection of its own, beside the batches (WAL: it sees
    /// every commit made before it began, never a batch in progress); any other statement is a
    /// job of the next batch, and fails alone (SQLite undoes a failed statement).
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLValue]) async throws -> [[SQLValue]] {
        if Self.reads(sql) {
            for reader in readers { if let rows = try reader.runIfFree(sql, parameters) { return rows } }
            return try readers[Int(nextReader.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(readers.count))].run(sql, parameters)
        }
        return try await group(savepoint: false) { db in try await db.query(sql, parameters) }
    }

    /// Whether `sql` only reads: a single `SELECT`.
    static func reads(_ sql: String) -> Bool {
        // Bytes, not `String.contains`: Foundation's is a search through CFString, 2.5 % of
        // flaphub's processor time a message when it was asked of every statement (issue 37).
        sql.utf8.prefix(6).map { $0 & 0xDF } == Array("SELECT".utf8) && !sql.utf8.contains(UInt8(ascii: ";"))
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
        await batch.run(job) { jobs in await commit(jobs) }
        if let failed = job.failure { throw failed }
        guard let value = made.withLock({ $0 }) else { throw DatabaseUnavailable(cause: "a batch ended without this transaction") }
        return value
    }

    /// One transaction for `jobs`, each in a savepoint (undone alone when it throws); each job
    /// is told its fate once the COMMIT has returned (or failed: then none of them happened).
    private func commit(_ jobs: [GroupCommitJob]) async {
        batches.add(1, ordering: .relaxed)
        let pooled = SQLiteStatements(handle: writer, onThePool: true), inline = SQLiteStatements(handle: writer, onThePool: false)
        do {
            try await pooled.query("BEGIN IMMEDIATE", [])
        } catch {
            for job in jobs { job.failure = error }
            return
        }
        for job in jobs {
            do {
                guard job.savepoint else {
                    do { try await job.body(inline) } catch { job.failure = error }
                    continue
                }
                try await inline.query("SAVEPOINT job", [])
                do {
                    try await job.body(inline)
                    try await inline.query("RELEASE job", [])
                } catch {
                    job.failure = error
                    try await inline.query("ROLLBACK TO job", [])
                    try await inline.query("RELEASE job", [])
                }
            } catch {
                // The savepoint itself failed: the transaction cannot be trusted; none of it commits.
                _ = try? await inline.query("ROLLBACK", [])
                for job in jobs where job.failure == nil { job.failure = error }
                return
            }
        }
        do {
            try await pooled.query("COMMIT", [])
        } catch {
            _ = try? await inline.query("ROLLBACK", [])
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
                for statement in Migration.statements(m.sqlite) { try await db.query(statement, []) }
                try await db.query("PRAGMA user_version = \(m.version)", [])
            }
        }
    }
}

/// One transaction (or statement) of a group commit: its work, and — once its batch is over —
/// why it did not happen, if it did not. (`@unchecked Sendable`: `failure` is written by the
/// batch's leader before the job's turn, and read by the job's caller after it.)
final class GroupCommitJob: GroupCommitTurn, @unchecked Sendable {
    let savepoint: Bool
    let body: @Sendable (any SQLQuerying) async throws -> Void
    var failure: (any Error)?

    init(savepoint: Bool, _ body: @escaping @Sendable (any SQLQuerying) async throws -> Void) {
        self.savepoint = savepoint
        self.body = body
    }
}
