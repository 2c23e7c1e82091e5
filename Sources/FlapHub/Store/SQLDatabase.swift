import FlapHubInput
import Foundation
/// A value in or out of a SQL database.
public enum SQLValue: Hashable, Sendable {
    case int(Int64), double(Double), text(String), null

    public var int: Int64? { if case .int(let v) = self { v } else { nil } }
    public var double: Double? {
        switch self { case .double(let v): v; case .int(let v): Double(v); default: nil }
    }
    public var text: String? { if case .text(let v) = self { v } else { nil } }
}

extension [SQLValue] {
    /// Column `i` of a row, where the schema promises text: a NULL, another type or a missing
    /// column (a database changed by hand) is an error that names the column, not a crash.
    func text(_ i: Int) throws(HubError) -> String {
        guard indices.contains(i), let v = self[i].text else { throw Self.unexpected(i, "text") }
        return v
    }

    /// Column `i` of a row, where the schema promises a number (see `text`).
    func double(_ i: Int) throws(HubError) -> Double {
        guard indices.contains(i), let v = self[i].double else { throw Self.unexpected(i, "a number") }
        return v
    }

    private static func unexpected(_ i: Int, _ kind: String) -> HubError {
        HubError(500, "the database answered a row whose column \(i + 1) is not \(kind) (was the schema changed by hand?)")
    }
}

/// What SQL statements run on: a database, or one of its connections inside a transaction.
/// Statements are written once for every engine: `?` placeholders, and the syntax SQLite and
/// PostgreSQL share (`ON CONFLICT DO NOTHING`, `RETURNING`).
public protocol SQLQuerying: Sendable {
    /// Runs one statement with parameters and returns its rows.
    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) async throws -> [[SQLValue]]
}

extension SQLQuerying {
    @discardableResult
    public func query(_ sql: String) async throws -> [[SQLValue]] { try await query(sql, []) }
}

/// A database flaphub keeps its store in: SQLite (one file, the default) or PostgreSQL (a
/// server several flaphub instances share).
public protocol SQLDatabase: SQLQuerying {
    /// Where the data is, for the log (never a password).
    var location: String { get }
    /// Runs `body` in one transaction on one connection: committed when it returns, rolled
    /// back when it throws. Transactions that `lock` the same key run one after another, in
    /// every process that shares the database.
    func transaction<T: Sendable>(lock: String?, _ body: @escaping @Sendable (any SQLQuerying) async throws -> T) async throws -> T
    /// Brings the schema to the newest of `migrations` (version 1 first), each once, in order.
    func migrate(_ migrations: [Migration]) async throws
}

/// One version of the schema: the statements that bring the version before it to this one.
public struct Migration: Sendable {
    public var version: Int
    public var sqlite: String
    public var postgres: String

    /// The statements of a script, split at its semicolons — but not inside a `$$`-quoted body
    /// (a PL/pgSQL function's), which holds semicolons of its own.
    static func statements(_ script: String) -> [String] {
        var all: [String] = [], current = "", quoted = false
        var rest = Substring(script)
        while let c = rest.first {
            if rest.hasPrefix("$$") {
                quoted.toggle()
                current += "$$"
                rest = rest.dropFirst(2)
                continue
            }
            rest = rest.dropFirst()
            if c == ";" && !quoted { all.append(current); current = "" } else { current.append(c) }
        }
        all.append(current)
        return all.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }
}

/// The database could not answer (down, unreachable, too slow): the request may be tried again.
public struct DatabaseUnavailable: Error, CustomStringConvertible {
    public var cause: String
    public var description: String { "the database is unavailable: \(cause)" }
}

extension SQLDatabase {
    /// A transaction that takes no lock of its own.
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLQuerying) async throws -> T) async throws -> T {
        try await transaction(lock: nil, body)
    }
}
