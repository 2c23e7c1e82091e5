import FlapClock
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server from Debian's packages, made for a test in a directory of its own
/// (`initdb`, trust on loopback, no fsync) and listening on a free loopback port. Started and
/// stopped by `pg_ctl`, which waits until the server accepts connections or has gone. Under
/// root it runs as the `postgres` user (PostgreSQL refuses root). It is stopped, immediately,
/// when the object goes.
public final class PostgresServer: @unchecked Sendable {
    public let directory: String
    public let port: Int
    private var data: String { directory + "/data" }

    /// The newest installed server's programs, or nil when PostgreSQL is not installed.
    public static let bin: String? = {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.last.map { "\(root)/\($0)/bin" }.flatMap { FileManager.default.isExecutableFile(atPath: $0 + "/postgres") ? $0 : nil }
    }()

    /// One server for every test of this process that needs only a database of its own.
    public static let shared: PostgresServer = {
        let s = try! PostgresServer()
        atexit {
            PostgresServer.shared.stop(mode: "immediate")
            try? FileManager.default.removeItem(atPath: PostgresServer.shared.directory)
        }
        return s
    }()

    public init() throws {
        guard let bin = Self.bin else { throw Failure("PostgreSQL is not installed (./setup --test installs it)") }
        directory = "/tmp/flapboard-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        port = try freeLoopbackPort()
        if geteuid() == 0 { try Self.run("/bin/chown", ["postgres:postgres", directory]) }
        try run(bin + "/initdb", ["-D", data, "-U", "flaphub", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"])
        try start()
    }

    deinit {
        stop(mode: "immediate")
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The server's main process (`postmaster.pid`'s first line), while it runs.
    public var postmasterPID: Int32? {
        (try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8))?.split(separator: "\n").first.flatMap { Int32($0) }
    }

    /// Starts the server (again, after a stop) and returns once it accepts connections.
    public func start() throws {
        let options = "-p \(port) -h 127.0.0.1 -k \(directory) -c fsync=off -c full_page_writes=off -c max_connections=300"
        try run(Self.bin! + "/pg_ctl", ["-D", data, "-w", "-t", "120", "-l", directory + "/log", "-o", options, "start"])
    }

    /// Stops the server: `fast` (clients told), or `immediate` (every process killed at once, no
    /// checkpoint: what a crash leaves, recovered at the next start).
    public func stop(mode: String = "fast") {
        guard FileManager.default.fileExists(atPath: data + "/postmaster.pid") else { return }
        try? run(Self.bin! + "/pg_ctl", ["-D", data, "-w", "-t", "120", "-m", mode, "stop"])
    }

    /// Makes a new, empty database; returns its name.
    public func createDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try psql("CREATE DATABASE \(name)")
        return name
    }

    /// Runs SQL through psql as the superuser; returns what it printed (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try run(Self.bin! + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "flaphub", "-d", database, "-v", "ON_ERROR_STOP=1", "-tAc", sql])
    }

    /// flaphub's `database` address of one of its databases. `wait`: how long a statement may
    /// wait (generous by default: a loaded test machine is slow, not down).
    public func address(_ database: String, wait: Int = 120) -> String {
        "postgres://flaphub@127.0.0.1:\(port)/\(database)?sslmode=disable&wait=\(wait)"
    }

    /// The shared server, made off the cooperative pool (making it blocks for a second or two).
    public static func sharedServer() async -> PostgresServer {
        await withCheckedContinuation { c in DispatchQueue.global().async { c.resume(returning: shared) } }
    }

    /// `createDatabase()` off the cooperative pool (it waits for psql).
    public func newDatabase() async throws -> String {
        try await withCheckedThrowingContinuation { c in DispatchQueue.global().async { c.resume(with: Result { try self.createDatabase() }) } }
    }

    /// The server's log so far.
    public var log: String { (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? "" }

    /// Runs a server program (as `postgres` under root) to its end.
    @discardableResult
    private func run(_ program: String, _ arguments: [String]) throws -> String {
        geteuid() == 0
            ? try Self.run("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", program] + arguments)
            : try Self.run(program, arguments)
    }

    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        // Into files, not pipes: the server `pg_ctl` starts keeps its parent's descriptors open.
        // posix_spawn and waitpid, not Foundation's Process, whose reaping waited for ever here
        // on a pg_ctl that had exited (its daemon child lives on).
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("pg-run-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base + ".out"); try? FileManager.default.removeItem(atPath: base + ".err") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, base + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, base + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // No signal blocked, every one at its default: the spawning thread may be a dispatch
        // worker, and the server must hear pg_ctl's signals.
        var pid: pid_t = 0
        closeOtherDescriptors(&actions)
        let rc = withCleanSignals { posix_spawn(&pid, program, &actions, &$0, argv, environ) }
        guard rc == 0 else { throw Failure("cannot start \(program): errno \(rc)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exited = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let output = FileManager.default.contents(atPath: base + ".out") ?? Data()
        let error = FileManager.default.contents(atPath: base + ".err") ?? Data()
        guard exited == 0 else {
            throw Failure("\(program) \(arguments.joined(separator: " ")) exited \(exited): \(String(decoding: error, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
    }
}

/// A port nothing listens on now (the kernel's choice for a socket bound to port 0).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw PostgresServer.Failure("cannot find a free loopback port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
