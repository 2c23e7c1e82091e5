import ArgumentParser
import FlapHub
import Foundation

/// `flaphub token`: the Cloud API tokens of a board (Vestaboard's Cloud and Read/Write APIs).
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage a board's Vestaboard Cloud API tokens.",
        discussion: """
            A token reads and/or writes one board (the user its flapd signs in as) through the hub's \
            Vestaboard Cloud API (X-Vestaboard-Token) or Read/Write API (X-Vestaboard-Read-Write-Key), \
            at the hub's root: vesta.CloudClient(token, base_url="http://HUB:8080").
            """,
        subcommands: [Add.self, List.self, Revoke.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a token for a board and print it (shown once).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The board's user (id or username).") var board: String
        @Flag(help: "The token reads what the board shows and its transition.") var read = false
        @Flag(help: "The token writes messages and the transition.") var write = false

        func run() async throws {
            // Neither flag: both, as Vestaboard's tokens do.
            let (made, token) = try await store.with { s in
                guard let u = try await s.user(board) else { throw failure("no user '\(board)'") }
                return try await s.addVestaboardToken(for: u.id, read: read || !write, write: write || !read, now: Date().timeIntervalSince1970)
            }
            FileHandle.standardError.write(Data("made token \(made.id) for \(board) (\(Self.rights(made))); the token:\n".utf8))
            print(token)
        }

        static func rights(_ t: HubStore.VestaboardToken) -> String { [t.canRead ? "read" : nil, t.canWrite ? "write" : nil].compactMap { $0 }.joined(separator: ", ") }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a board's tokens (their ids and rights; never the tokens).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The board's user (id or username).") var board: String

        func run() async throws {
            let tokens = try await store.with { s in
                guard let u = try await s.user(board) else { throw failure("no user '\(board)'") }
                return try await s.vestaboardTokens(of: u.id)
            }
            let format = ISO8601DateFormatter()
            for t in tokens { print("\(t.id)  \(Add.rights(t))  made \(format.string(from: Date(timeIntervalSince1970: t.createdAt)))") }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a board's token by its id (as `token list` prints it).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The board's user (id or username).") var board: String
        @Argument(help: "The token's id.") var id: String

        func run() async throws {
            let revoked = try await store.with { s in
                guard let u = try await s.user(board) else { throw failure("no user '\(board)'") }
                return try await s.revokeVestaboardToken(id, of: u.id)
            }
            guard revoked else { throw failure("\(board) has no token \(id)") }
            print("revoked \(id)")
        }
    }
}
