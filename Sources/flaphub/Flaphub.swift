import ArgumentParser
import FlapHub
import FlapRelease
import Foundation
import Logging

/// `flaphub`: the self-hostable server of the message API that `flapd` subscribes to.
@main
struct Flaphub: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flaphub",
        abstract: "The Flapboard message API, self-hosted: users, friends, messages; REST and WebSocket over SQLite or PostgreSQL.",
        version: Release.line,
        subcommands: [Serve.self, User.self, Friend.self, Token.self])
}

/// Where the store is: a config file, or the database path directly.
struct StoreOptions: ParsableArguments {
    @Option(help: "Config file (YAML: database, bind, port, message_ttl_seconds, messages_per_hour).")
    var config: String?
    @Option(help: "SQLite database file, or postgres://user@host:port/name (overrides the config; default flaphub.db).")
    var database: String?

    func load() throws -> HubConfig {
        var c = HubConfig()
        if let config {
            do { c = try HubConfig.load(file: config) } catch { throw failure("\(error)") }
        }
        if let database { c.database = database }
        return c
    }

    /// Runs `body` on the store (an admin command, or the server), and closes it after.
    func with<T>(logger: Logger = Logger(label: "flaphub"), _ body: (HubStore) async throws -> T) async throws -> T {
        let config = try load()
        do {
            return try await config.withDatabase(logger: logger) { try await body(try await HubStore($0)) }
        } catch let e as ExitCode { throw e } catch { throw failure("\(error)") }
    }
}

func failure(_ message: String) -> ExitCode {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    return ExitCode(1)
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server.")
    @OptionGroup var store: StoreOptions
    @Option(help: "Address to listen on (overrides the config; default 127.0.0.1).") var bind: String?
    @Option(help: "Port (overrides the config; default 8080; 0 picks a free one).") var port: Int?
    @Option(help: "Log level.") var logLevel: String = "info"

    func run() async throws {
        var config = try store.load()
        if let bind { config.bind = bind }
        if let port { config.port = port }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        let logger = Logger(label: "flaphub")
        let bindAddress = config.bind, port = config.port, limits = config.limits
        try await store.with(logger: logger) { store in
            let hub = Hub(store: store, logger: logger, limits: limits)
            let app = hub.application(bind: bindAddress, port: port) { port in
                logger.notice("flaphub listening on http://\(bindAddress):\(port)", metadata: ["database": "\(hub.store.db.location)"])
            }
            try await app.runService()
        }
    }
}

struct User: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage users.", subcommands: [Add.self, List.self, Link.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user and print its bearer token (shown once).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Username (1-20 letters, digits, '_', '.', '-').") var name: String
        @Option(help: "Display name.") var displayName: String?

        func run() async throws {
            let (user, token) = try await store.with { try await $0.addUser(name, displayName: displayName, now: Date().timeIntervalSince1970) }
            FileHandle.standardError.write(Data("created user \(user.username) (\(user.id)); its token:\n".utf8))
            print(token)
        }
    }

    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a one-time link that signs a user in to the sender's page.",
            discussion: "The link works once, within --minutes; opening it starts a session of 30 days on that browser.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "A user (id or username).") var name: String
        @Option(help: "The address people reach this hub at (default http://127.0.0.1:8080).") var url = "http://127.0.0.1:8080"
        @Option(help: "Minutes the link stays good (1-10080).") var minutes = 15

        func validate() throws {
            guard (1...10080).contains(minutes) else { throw ValidationError("--minutes must be 1–10080, not \(minutes)") }
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else { throw ValidationError("--url must start with http:// or https://") }
        }

        func run() async throws {
            let code = try await store.with { s in
                guard let u = try await s.user(name) else { throw failure("no user '\(name)'") }
                return try await s.newSignInLink(for: u.id, now: Date().timeIntervalSince1970, seconds: Double(minutes) * 60)
            }
            print((url.hasSuffix("/") ? String(url.dropLast()) : url) + "/#link=" + code)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")
        @OptionGroup var store: StoreOptions
        func run() async throws {
            for u in try await store.with({ try await $0.allUsers() }) { print("\(u.id)  \(u.username)\(u.displayName.map { "  (\($0))" } ?? "")") }
        }
    }
}

struct Friend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage friendships.", subcommands: [Add.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make two users friends (both ways).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "A user (id or username).") var a: String
        @Argument(help: "Another user (id or username).") var b: String

        func run() async throws {
            try await store.with { s in
                guard let x = try await s.user(a) else { throw failure("no user '\(a)'") }
                guard let y = try await s.user(b) else { throw failure("no user '\(b)'") }
                try await s.befriend(x.id, y.id, now: Date().timeIntervalSince1970)
                print("\(x.username) and \(y.username) are friends")
            }
        }
    }
}
