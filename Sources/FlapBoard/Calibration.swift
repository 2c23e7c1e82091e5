import Foundation

/// Each GPIO module's offset — the steps from its magnet to flap 0 — kept in the state
/// directory (`calibration.json`, `{"boards": {"<id>": [offsets row by row]}}`), set by
/// `flapd calibrate`, read when flapd starts and before every `flapd home`. Never by reflashing.
public enum Calibration {
    public static func path(_ directory: String) -> String { directory + "/calibration.json" }

    /// The offsets of every board in the file (none when it is missing).
    public static func load(_ directory: String) throws -> [String: [Int]] {
        guard let data = FileManager.default.contents(atPath: path(directory)) else { return [:] }
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let boards = root["boards"] as? [String: [Int]] else {
            throw CalibrationError("\(path(directory)) is not {\"boards\": {\"<board id>\": [offsets]}}")
        }
        return boards
    }

    /// Sets one module's offset (row-major `index` of a board of `modules`), keeping the rest.
    public static func set(_ offset: Int, board: String, index: Int, modules: Int, in directory: String) throws {
        var boards = try load(directory)
        var offsets = boards[board] ?? []
        if offsets.count != modules { offsets = Array(repeating: 0, count: modules) }
        offsets[index] = offset
        boards[board] = offsets
        let data = try JSONSerialization.data(withJSONObject: ["boards": boards], options: [.sortedKeys, .prettyPrinted])
        try AtomicFile.replace(path(directory), in: directory, with: data)
    }
}

public struct CalibrationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
