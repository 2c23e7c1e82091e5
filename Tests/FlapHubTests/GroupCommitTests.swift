import Foundation
import Synchronization
import Testing
import TestWaits
@testable import FlapHub

/// Issue 37, item 3: flaphub's SQLite store syncs every commit and groups the transactions that
/// come while one commits into one — each undone alone when it fails, each answered once its
/// batch is on the disk.
@Suite struct GroupCommitTests {
    struct Refused: Error {}

    func database() async throws -> (SQLiteDatabase, String) {
        let path = NSTemporaryDirectory() + "group-\(UUID().uuidString).db"
        let db = try await SQLiteDatabase.open(path: path)
        try await db.query("CREATE TABLE t(n INTEGER PRIMARY KEY)", [])
        return (db, path)
    }

    @Test func everyCommitIsSynced() async throws {
        let (db, path) = try await database()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // 2: FULL — the WAL is synced at each commit, so an answered write survives a power cut.
        #expect(try await db.query("PRAGMA synchronous", []).first?.first?.int == 2)
        #expect(try await db.query("PRAGMA journal_mode", []).first?.first == .text("wal"))
        // The writer's savepoint journals in memory (2), its WAL copied back every 10,000 pages.
        #expect(try await db.query("PRAGMA temp_store", []).first?.first?.int == 2)
        #expect(try await db.query("PRAGMA wal_autocheckpoint", []).first?.first?.int == 10000)
    }

    /// While the first transaction holds the batch (its body waits), 40 more come: they are
    /// committed together, in one more batch; the one that throws is undone alone, and each
    /// caller gets its own answer.
    @Test func transactionsThatComeWhileOneCommitsGoTogetherAndFailAlone() async throws {
        let (db, path) = try await database()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let before = db.batches.load(ordering: .relaxed)
        let first = Held()
        let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            group.addTask { try await first.run(db, 0); return (0, true) }
            await first.begun()
            for n in 1...40 {
                group.addTask {
                    do {
                        try await db.transaction { c in
                            try await c.query("INSERT INTO t(n) VALUES(?)", [.int(Int64(n))])
                            if n == 17 { throw Refused() }
                        }
                        return (n, true)
                    } catch is Refused { return (n, false) }
                }
            }
            // The 40 are queued behind the first (nothing else can take the gate it holds).
            #expect(await eventually { db.queued == 40 })
            first.releaseSignal.yield()
            return try await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == 41 && results.filter { !$0.value }.map(\.key) == [17])
        #expect(db.batches.load(ordering: .relaxed) - before == 2, "two batches: the first transaction's, then the 40")
        let stored = try await db.query("SELECT n FROM t ORDER BY n", []).compactMap { $0.first?.int }
        #expect(stored == Array(0...40).filter { $0 != 17 })
    }

    /// A transaction that says when it has begun and holds its batch until released.
    struct Held: Sendable {
        let entered: AsyncStream<Void>, enteredSignal: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>, releaseSignal: AsyncStream<Void>.Continuation
        init() {
            (entered, enteredSignal) = AsyncStream.makeStream(of: Void.self)
            (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        }
        func run(_ db: SQLiteDatabase, _ n: Int) async throws {
            try await db.transaction { c in
                enteredSignal.yield()
                for await _ in release { break }
                try await c.query("INSERT INTO t(n) VALUES(?)", [.int(Int64(n))])
            }
        }
        func begun() async { for await _ in entered { break } }
    }

    /// A caller is answered once its own batch has committed — not after the batches of those
    /// who came before it take their turns: here C is committed in B's batch and answered while
    /// D's batch, begun after it, is still held (when each caller took the writer in turn, C's
    /// turn came after B's batch and committed D's, so C waited for D).
    @Test func aCallerWaitsForItsOwnBatchOnly() async throws {
        let (db, path) = try await database()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let a = Held(), b = Held(), d = Held()
        final class Answers: Sendable { let order = Mutex<[String]>([]) }
        let answers = Answers()
        let answer = { @Sendable (who: String) in answers.order.withLock { $0.append(who) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await a.run(db, 1); answer("A") }
            await a.begun()
            group.addTask { try await b.run(db, 2); answer("B") }
            #expect(await eventually { db.queued == 1 })
            group.addTask { try await db.query("INSERT INTO t(n) VALUES(3)", []); answer("C") }
            #expect(await eventually { db.queued == 2 })
            a.releaseSignal.yield()
            await b.begun()  // B leads the next batch, C in it
            group.addTask { try await d.run(db, 4); answer("D") }
            #expect(await eventually { db.queued == 1 })
            b.releaseSignal.yield()
            await d.begun()  // D leads a third batch and holds it
            #expect(await eventually(within: 60) { answers.order.withLock { $0.count } == 3 })
            let order = answers.order.withLock { $0 }
            #expect(order == ["A", "B", "C"] || order == ["A", "C", "B"], "\(order)")
            d.releaseSignal.yield()
            try await group.waitForAll()
        }
        #expect(try await db.query("SELECT n FROM t ORDER BY n", []).compactMap { $0.first?.int } == [1, 2, 3, 4])
    }

    /// A statement that fails in a batch fails alone: the others of its batch commit.
    @Test func aFailingStatementIsUndoneAlone() async throws {
        let (db, path) = try await database()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await db.query("INSERT INTO t(n) VALUES(1)", [])
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for n in [1, 2, 3] {
                group.addTask { (try? await db.query("INSERT INTO t(n) VALUES(?)", [.int(Int64(n))])) != nil }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 2)
        #expect(try await db.query("SELECT n FROM t ORDER BY n", []).compactMap { $0.first?.int } == [1, 2, 3])
    }
}
