import FlapCore
import Foundation

/// The board state that must survive a restart or a power cut — a physical board cannot be asked
/// where its flaps are: each board's flap positions and the frame it is going to. Kept in
/// `<state dir>/boards.json`, replaced atomically (write a temporary file, fsync, rename, fsync
/// the directory), so a crash at any instant leaves the old state or the new, never half.
public struct StateStore: Sendable {
    public let directory: String
    var file: String { directory + "/boards.json" }

    public init(directory: String) { self.directory = directory }

    /// One board's saved state, in Vestaboard codes (so that a changed drum cannot misread it).
    public struct BoardState: Codable, Sendable, Equatable {
        public var id: String
        public var rows: Int
        public var cols: Int
        public var positions: [Int]
        public var target: [Int]
    }

    /// What `boards.json` holds.
    package struct Document: Codable {
        package var version = 1
        package var boards: [BoardState]
    }

    /// The saved boards, or none when there is no state yet. Throws on a file it cannot read.
    public func load() throws -> [BoardState] {
        guard FileManager.default.fileExists(atPath: file) else { return [] }
        return try StateFile.read(Document.self, from: file).boards
    }

    /// Replaces the saved state; on failure the previous file is untouched.
    public func save(_ boards: [BoardState]) throws {
        let data = try JSONEncoder().encode(Document(boards: boards))
        try AtomicFile.replace(file, in: directory, with: data)
    }
}

/// Why the state could not be written or read.
public struct StateError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}
