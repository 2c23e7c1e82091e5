import Foundation
import Testing
@testable import FlapHub

/// flaphub's own SQLite connection (`SQLiteHandle`, Debian's libsqlite3): values round-trip
/// exactly, statements are kept compiled within a bound, and a file another connection holds
/// past the busy timeout is "unavailable" (503), not an internal error.
@Suite struct SQLiteHandleTests {
    func path() -> String { NSTemporaryDirectory() + "handle-\(UUID().uuidString).db" }

    @Test func valuesRoundTripExactly() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let db = try SQLiteHandle.open(path: file, pragmas: [])
        _ = try db.run("CREATE TABLE v(a, b, c, d)", [])
        let values: [[SQLValue]] = [
            [.int(.max), .int(.min), .double(-0.125), .null],
            [.text(""), .text("a\u{0}b"), .text("flap ✈︎ 🛫"), .text(String(repeating: "x", count: 70_000))],
        ]
        for row in values { _ = try db.run("INSERT INTO v VALUES(?,?,?,?)", row) }
        #expect(try db.run("SELECT a, b, c, d FROM v ORDER BY rowid", []) == values)
    }

    /// More distinct statements than are kept compiled: every one still runs, right.
    @Test func statementsPastTheCacheStillRun() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let db = try SQLiteHandle.open(path: file, pragmas: [])
        for n in 0..<(SQLiteHandle.cachedStatements * 2 + 3) {
            #expect(try db.run("SELECT \(n) + ?", [.int(1)]) == [[.int(Int64(n + 1))]])
        }
        #expect(try db.run("SELECT 1 + ?", [.int(1)]) == [[.int(2)]])
    }

    @Test func aFileHeldPastTheBusyTimeoutIsUnavailable() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let holder = try SQLiteHandle.open(path: file, pragmas: ["PRAGMA journal_mode = WAL"])
        _ = try holder.run("CREATE TABLE t(n)", [])
        _ = try holder.run("BEGIN IMMEDIATE", [])
        let other = try SQLiteHandle.open(path: file, pragmas: ["PRAGMA busy_timeout = 50"])
        #expect(throws: DatabaseUnavailable.self) { try other.run("BEGIN IMMEDIATE", []) }
        // A reader is not held up by the writer (WAL).
        #expect(try other.run("SELECT count(*) FROM t", []) == [[.int(0)]])
        _ = try holder.run("COMMIT", [])
    }

    @Test func aWrongStatementNamesSQLitesErrorAndTheStatement() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let db = try SQLiteHandle.open(path: file, pragmas: [])
        do {
            _ = try db.run("SELEC 1", [])
            Issue.record("no error")
        } catch let failure as SQLiteHandle.Failure {
            #expect(failure.description.contains("syntax error") && failure.description.contains("SELEC 1"), "\(failure)")
        }
    }
}
