import Foundation

/// Where a PostgreSQL store is: `database: postgres://user@host:port/name?sslmode=…` in the
/// config, the password apart (`database_password_file` or `database_password_env`; a password
/// in the address is refused, so the address can be logged).
public struct PostgresSettings: Sendable, Equatable, CustomStringConvertible {
    public var host = "127.0.0.1"
    public var port = 5432
    public var username = "flaphub"
    public var password: String?
    public var database = "flaphub"
    public var tls = TLSMode.prefer
    /// Connections each instance may hold (PostgreSQL's own default limit is 100 in all).
    public var maxConnections = 20
    /// How long a statement or transaction may wait for a connection and its answer before the
    /// request is answered 503 (below the 10 s every request must be answered within).
    public var wait = Duration.seconds(5)

    public enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
    }

    public init() {}

    /// Whether a `database` value names PostgreSQL rather than a SQLite file.
    public static func isAddress(_ s: String) -> Bool { s.hasPrefix("postgres://") || s.hasPrefix("postgresql://") }

    /// Reads `postgres://user@host:port/name?sslmode=disable|prefer|require`; the problem in words.
    public static func parse(_ address: String) -> Result<PostgresSettings, HubError> {
        // The address as it may be shown: a password in it (refused) is never repeated.
        let shown = address.replacingOccurrences(of: #"(://[^:/@]*):[^@/]*@"#, with: "$1:***@", options: .regularExpression)
        func bad(_ why: String) -> Result<PostgresSettings, HubError> { .failure(HubError(1, "database: '\(shown)': \(why)")) }
        guard let url = URLComponents(string: address), let host = url.host, !host.isEmpty else {
            return bad("expected postgres://user@host:port/database")
        }
        guard url.password == nil else { return bad("a password in the address; put it in database_password_file or database_password_env") }
        var s = PostgresSettings()
        s.host = host
        if let p = url.port { guard (1...65535).contains(p) else { return bad("port \(p) is outside 1…65535") }; s.port = p }
        if let u = url.user, !u.isEmpty { s.username = u }
        let name = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        if !name.isEmpty { s.database = name }
        guard s.database.utf8.count <= 63, s.username.utf8.count <= 63 else { return bad("names are at most 63 bytes in PostgreSQL") }
        for item in url.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: item.value ?? "") else { return bad("sslmode '\(item.value ?? "")' is not disable, prefer or require") }
                s.tls = mode
            case "wait":
                guard let n = item.value.flatMap(Int.init), (1...600).contains(n) else { return bad("wait must be 1…600 seconds") }
                s.wait = .seconds(n)
            case "connections":
                // One of them listens for the other instances' events all the time.
                guard let n = item.value.flatMap(Int.init), (2...200).contains(n) else { return bad("connections must be 2…200") }
                s.maxConnections = n
            default: return bad("unknown parameter '\(item.name)' (known: sslmode, connections, wait)")
            }
        }
        return .success(s)
    }

    /// The address without the password.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)" }
}
