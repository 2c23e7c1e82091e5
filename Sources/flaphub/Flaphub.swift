import ArgumentParser
import FlapHub
import Foundation
import Logging

/// `flaphub`: the self-hostable server of the message API that `flapd` subscribes to.
@main
struct Flaphub: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flaphub",
        abstract: "The Flapboard message API, self-hosted: users, friends, messages; REST and WebSocket over SQLite.",
        subcommands: [Serve.self, User.self, Friend.self])
}

/// Where the store is: a config file, or the database path directly.
struct StoreOptions: ParsableArguments {
    @Option(help: "Config file (YAML: database, bind, port, message_ttl_seconds, messages_per_hour).")
    var config: String?
    @Option(help: "SQLite database file (overrides the config; default flaphub.db).")
    var database: String?

    func load() throws -> HubConfig {
        var c = HubConfig()
        if let config {
            do { c = try HubConfig.load(file: config) } catch { throw failure("\(error)") }
        }
        if let database { c.database = database }
        return c
    }

    func store() throws -> HubStore {
        let path = try load().database
        do { return try HubStore(path: path) } catch { throw failure("\(error)") }
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
        let hub = Hub(store: try store.store(), logger: logger, limits: config.limits)
        let bindAddress = config.bind
        let app = hub.application(bind: config.bind, port: config.port) { port in
            logger.notice("flaphub listening on http://\(bindAddress):\(port)", metadata: ["database": "\(hub.store.db.path)"])
        }
        try await app.runService()
    }
}

struct User: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage users.", subcommands: [Add.self, List.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user and print its bearer token (shown once).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Username (1–20 letters, digits, '_', '.', '-').") var name: String
        @Option(help: "Display name.") var displayName: String?

        func run() throws {
            do {
                let (user, token) = try store.store().addUser(name, displayName: displayName, now: Date().timeIntervalSince1970)
                FileHandle.standardError.write(Data("created user \(user.username) (\(user.id)); its token:\n".utf8))
                print(token)
            } catch let e as ExitCode { throw e } catch { throw failure("\(error)") }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")
        @OptionGroup var store: StoreOptions
        func run() throws {
            for u in try store.store().allUsers() { print("\(u.id)  \(u.username)\(u.displayName.map { "  (\($0))" } ?? "")") }
        }
    }
}

struct Friend: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage friendships.", subcommands: [Add.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make two users friends (both ways).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "A user (id or username).") var a: String
        @Argument(help: "Another user (id or username).") var b: String

        func run() throws {
            let s = try store.store()
            do {
                guard let x = try s.user(a) else { throw failure("no user '\(a)'") }
                guard let y = try s.user(b) else { throw failure("no user '\(b)'") }
                try s.befriend(x.id, y.id, now: Date().timeIntervalSince1970)
                print("\(x.username) and \(y.username) are friends")
            } catch let e as ExitCode { throw e } catch { throw failure("\(error)") }
        }
    }
}
