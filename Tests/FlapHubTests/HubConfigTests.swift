import FlapHubInput
import Foundation
import Logging
import Testing
@testable import FlapHub

/// flaphub's config: the PostgreSQL address and its password, connection limits; every
/// problem named with its key.
@Suite struct HubConfigTests {
    func load(_ text: String) throws -> HubConfig {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hub-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return try HubConfig.load(file: path)
    }

    func problem(_ text: String) -> String {
        do { _ = try load(text); return "" } catch { return "\(error)" }
    }

    /// The config the package installs (packaging/flaphub.yaml) reads, and says what the unit expects.
    @Test func thePackagedConfigIsValid() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("packaging/flaphub.yaml").path
        let c = try HubConfig.load(file: file)
        #expect(c.database == "/var/lib/flaphub/flaphub.db" && c.bind == "127.0.0.1" && c.port == 8080)
    }

    @Test func aPostgresAddressAndTheLimits() throws {
        let c = try load("database: postgres://hub@db.example:6543/boards?sslmode=require&connections=50\nmax_connections: 4000\nmax_connections_per_client: 3000\nping_seconds: 90\n")
        let s = try PostgresSettings.parse(c.database).get()
        #expect(s.host == "db.example" && s.port == 6543 && s.username == "hub" && s.database == "boards" && s.tls == .require && s.maxConnections == 50)
        #expect(s.description == "postgres://hub@db.example:6543/boards?sslmode=require")
        #expect(c.limits.maxConnections == 4000 && c.limits.maxConnectionsPerClient == 3000 && c.limits.pingSeconds == 90)
        #expect(try load("port: 8080\n").limits.pingSeconds == nil, "unset: boards keep their own")
    }

    @Test func hostileValuesAreNamed() {
        #expect(problem("database: postgres://hub:secret@db/x\n").contains("a password in the address"))
        #expect(!problem("database: postgres://hub:secret@db/x\n").contains("secret@"), "the password is not repeated")
        #expect(problem("database: postgres://db/x?sslmode=maybe\n").contains("sslmode 'maybe'"))
        #expect(problem("database: postgres://db/x?connections=1\n").contains("connections must be 2…200"))
        #expect(problem("database: postgres://db/x?timeout=1\n").contains("unknown parameter 'timeout'"))
        #expect(problem("database: postgres:///x\n").contains("expected postgres://user@host:port/database"))
        #expect(problem("max_connections: 0\n").contains("max_connections: '0' is outside 1…100000 (line 1)"))
        #expect(problem("database_password_env: ''\n").contains("database_password_env"))
        #expect(problem("ping_seconds: 0\n").contains("ping_seconds: '0' is outside 1…300 (line 1)"))
        #expect(problem("ping_seconds: often\n").contains("ping_seconds: 'often' is outside 1…300"))
    }

    /// The config is read within flapd's config's budget: a dozen lines of aliases used as
    /// mapping keys kept flaphub from starting (the duplicate-key check compares them whole:
    /// 10⁷ nodes took 3.7 s, 10⁹ would take hours); nesting, size and bytes that are not UTF-8.
    @Test func aConfigMadeToHurtIsRefusedAtOnceByItsLimit() throws {
        var bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for l in 1..<9 { bomb += "a\(l): &a\(l) [" + Array(repeating: "*a\(l - 1)", count: 10).joined(separator: ", ") + "]\n" }
        bomb += "? *a8\n: boom\n? *a8\n: again\n"
        #expect(problem(bomb).hasSuffix(": aliases expand to more than 100000 nodes (line 5)"), "\(problem(bomb))")
        #expect(problem("port: " + String(repeating: "[", count: 40)).hasSuffix(": nested deeper than 32 levels (line 1)"))
        #expect(problem(String(repeating: "# comment\n", count: 110_000)).hasSuffix(": cannot read the file: larger than 1048576 bytes"))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hub-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data([0x70, 0x6F, 0x72, 0x74, 0x3A, 0x20, 0xFF, 0x0A]).write(to: URL(fileURLWithPath: path))
        #expect(throws: HubError.self) { try HubConfig.load(file: path) }
    }

    @Test func thePasswordFileMustBePrivate() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pw-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "hunter2\n".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        var c = try load("database: postgres://hub@127.0.0.1/x\ndatabase_password_file: \(file)\n")
        await #expect(throws: HubError.self) { _ = try await c.openDatabase(logger: Logger(label: "test")) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        #expect(try await c.openDatabase(logger: Logger(label: "test")).location == "postgres://hub@127.0.0.1:5432/x?sslmode=prefer")
        c.passwordFile = nil
        c.passwordEnv = "FLAPHUB_TEST_UNSET_\(UUID().uuidString.prefix(6))"
        await #expect(throws: HubError.self) { _ = try await c.openDatabase(logger: Logger(label: "test")) }
    }
}
