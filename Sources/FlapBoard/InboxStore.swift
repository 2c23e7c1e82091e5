import FlapCore
import FlapMessages
import Foundation

/// `<state dir>/inbox.json`: the message inbox (latest per sender, held messages, ids seen) and
/// the ids already reported displayed, so a restart shows the same board without the API.
public struct InboxStore: Sendable {
    public let directory: String
    public var file: String { directory + "/inbox.json" }

    public init(directory: String) { self.directory = directory }

    public struct Saved: Codable, Sendable, Equatable {
        public var inbox = Inbox()
        public var displayed: Set<String> = []
        public init() {}
    }

    /// The saved inbox, or an empty one when there is none yet. Throws on a file it cannot read.
    public func load() throws -> Saved {
        guard FileManager.default.fileExists(atPath: file) else { return Saved() }
        return try StateFile.read(Saved.self, from: file)
    }

    public func save(_ saved: Saved) throws {
        try AtomicFile.replace(file, in: directory, with: try JSONEncoder().encode(saved))
    }
}
