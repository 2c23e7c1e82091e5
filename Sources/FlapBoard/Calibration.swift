import FlapInput
import Foundation

/// Each GPIO module's offset — the steps from its magnet to flap 0 — kept in the state
/// directory (`calibration.json`, `{"boards": {"<id>": [offsets row by row]}}`), set by
/// `flapd calibrate`, read when flapd starts and before every `flapd home`. Never by reflashing.
public enum Calibration {
    public static func path(_ directory: String) -> String { directory + "/calibration.json" }

    /// What the file may hold: 4 MiB (a board of 8,192 modules takes some 100 KiB), 8 deep (it
    /// is 3). It is read at every start of a board with home sensors, whoever wrote it, so it is
    /// never read past its limit and is checked as strict JSON before Foundation's parser sees it.
    public static let limits = JSONLimits(maxBytes: 4 << 20, maxDepth: 8, maxValues: 1 << 20)

    /// The offsets of every board in the file (none when it is missing).
    public static func load(_ directory: String) throws -> [String: [Int]] {
        let bytes: [UInt8]
        do { bytes = try BoundedFile.read(path(directory), maxBytes: limits.maxBytes) } catch {
            if case .missing = error { return [:] }
            throw CalibrationError("\(error)")
        }
        return try parse(bytes, file: path(directory))
    }

    /// What `load` makes of the bytes of `file`.
    public static func parse(_ bytes: [UInt8], file: String) throws -> [String: [Int]] {
        do throws(JSONInputError) { try StrictJSON.check(bytes, limits: limits) } catch {
            throw CalibrationError("\(file): not JSON within the limits: \(error)")
        }
        guard let root = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let boards = root["boards"] as? [String: [Int]] else {
            throw CalibrationError("\(file) is not {\"boards\": {\"<board id>\": [offsets]}}")
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
