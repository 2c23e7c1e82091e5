import Foundation
import Yams

/// flaphub's config file (YAML): `database` (the SQLite file), `bind`, `port`.
public struct HubConfig: Sendable, Equatable {
    public var database = "flaphub.db"
    public var bind = "127.0.0.1"
    public var port = 8080

    public init() {}

    /// Reads a config file; every problem is named with its key and line.
    public static func load(file: String) throws -> HubConfig {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw HubError(1, "\(file): cannot read the file") }
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch { throw HubError(1, "\(file): not valid YAML: \(error)") }
        var config = HubConfig()
        var problems: [String] = []
        for (k, v) in root?.mapping ?? [:] {
            let key = k.string ?? "?"
            let line = "(line \(k.mark?.line ?? 0))"
            switch key {
            case "database": if let s = v.string { config.database = s } else { problems.append("database: expected a file path \(line)") }
            case "bind": if let s = v.string { config.bind = s } else { problems.append("bind: expected an address \(line)") }
            case "port":
                if let n = v.int, (0...65535).contains(n) { config.port = n } else { problems.append("port: '\(v.string ?? "?")' is outside 0…65535 \(line)") }
            default: problems.append("\(key): unknown key (known here: bind, database, port) \(line)")
            }
        }
        if root != nil, root?.mapping == nil { problems.append("expected a mapping of keys") }
        guard problems.isEmpty else { throw HubError(1, "\(file):\n" + problems.map { "  " + $0 }.joined(separator: "\n")) }
        return config
    }
}
