import Foundation
import Synchronization

/// Named boards to go back to: what the local API's board (or grid) showed, saved under a name,
/// listed, read and deleted; kept in `<state dir>/saved-boards.json` (written atomically at
/// every change), or only in memory without a state folder. At most `maxCount`, each name
/// `isName`. Restoring one is the local API's business (a message of the local sender).
public final class SavedBoards: Sendable {
    /// One saved board: its name, when it was saved (seconds since 1970) and its codes, row by row.
    public struct Saved: Codable, Sendable, Equatable {
        public var name: String
        public var savedAt: Double
        public var codes: [[Int]]
    }

    /// Why a save or a read was refused, with the HTTP status it answers.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var status: Int
        public var description: String
    }

    public static let maxCount = 32
    public static let maxNameLength = 40
    public static let maxCodes = 4096

    private let file: String?
    private let boards: Mutex<[String: Saved]>
    private let changed = Mutex<[@Sendable ([String]) -> Void]>([])

    /// Reads the saved boards of `folder` (nil: none kept on disk). A file that cannot be read
    /// is named in `problem` and left alone until the next save replaces it.
    public init(folder: String?) {
        file = folder.map { $0 + "/saved-boards.json" }
        var loaded: [String: Saved] = [:], problem: String?
        if let file, FileManager.default.fileExists(atPath: file) {
            do {
                loaded = Self.kept(try StateFile.read([Saved].self, from: file))
            } catch { problem = "\(error)" }
        }
        boards = Mutex(loaded)
        self.problem = problem
    }

    /// What is kept of a file's list: the first `maxCount` of good names and at most `maxCodes`
    /// codes (what `save` would have taken).
    package static func kept(_ list: [Saved]) -> [String: Saved] {
        var kept: [String: Saved] = [:]
        for s in list where kept.count < maxCount && isName(s.name) && s.codes.joined().count <= maxCodes { kept[s.name] = s }
        return kept
    }

    /// Why the saved file could not be read at start, if it could not.
    public let problem: String?

    /// 1–40 letters, digits, `_`, `-`, `.`: safe in a URL path, an MQTT payload and a file.
    public static func isName(_ name: String) -> Bool {
        (1...maxNameLength).contains(name.utf8.count)
            && name.utf8.allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// The names, sorted.
    public var names: [String] { boards.withLock { $0.keys.sorted() } }
    public func list() -> [Saved] { boards.withLock { $0.values.sorted { $0.name < $1.name } } }
    public func saved(_ name: String) -> Saved? { boards.withLock { $0[name] } }

    /// Calls `body` with the names after every change.
    public func onChange(_ body: @escaping @Sendable ([String]) -> Void) { changed.withLock { $0.append(body) } }

    /// Saves `codes` under `name` (replacing one of that name); returns it and whether it is new.
    /// Blocks on the disk: call it off the event loops.
    public func save(_ name: String, codes: [[Int]], now: Double) throws(Refusal) -> (Saved, new: Bool) {
        guard Self.isName(name) else {
            throw Refusal(status: 400, description: "a saved board's name is 1–\(Self.maxNameLength) letters, digits, '_', '-' or '.'")
        }
        guard codes.joined().count <= Self.maxCodes else { throw Refusal(status: 413, description: "at most \(Self.maxCodes) codes") }
        let saved = Saved(name: name, savedAt: now, codes: codes)
        let new = try change { all throws(Refusal) in
            let new = all[name] == nil
            guard !new || all.count < Self.maxCount else {
                throw Refusal(status: 409, description: "at most \(Self.maxCount) saved boards; delete one first")
            }
            all[name] = saved
            return new
        }
        return (saved, new)
    }

    /// Deletes a saved board; false when there is none of that name. Blocks on the disk.
    public func delete(_ name: String) throws(Refusal) -> Bool {
        try change { all in all.removeValue(forKey: name) != nil }
    }

    /// Changes the boards and writes them, as one step (two changes never write out of order);
    /// a change that cannot be written is undone.
    private func change<T>(_ body: (inout [String: Saved]) throws(Refusal) -> T) throws(Refusal) -> T {
        let (result, names): (T, [String]?) = try boards.withLock { (all) throws(Refusal) -> (T, [String]?) in
            let before = all
            let result = try body(&all)
            guard all != before else { return (result, nil) }
            if let file {
                do {
                    let list = all.values.sorted { $0.name < $1.name }
                    try AtomicFile.replace(file, in: (file as NSString).deletingLastPathComponent, with: try JSONEncoder().encode(list))
                } catch {
                    all = before
                    throw Refusal(status: 500, description: "the saved boards could not be written: \(error)")
                }
            }
            return (result, all.keys.sorted())
        }
        if let names { for body in changed.withLock({ $0 }) { body(names) } }
        return result
    }
}

private extension UInt8 {
    var isASCIILetterOrDigit: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
