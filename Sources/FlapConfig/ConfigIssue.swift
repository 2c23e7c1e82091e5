/// One problem in a config file: where (key path and line) and what.
public struct ConfigIssue: Error, Hashable, Sendable, CustomStringConvertible {
    /// The key path, e.g. `boards[0].timing.flip_ms`.
    public var path: String
    /// The line in the file, when known.
    public var line: Int?
    public var message: String

    public var description: String {
        let place = path.isEmpty ? "config" : path
        return line.map { "\(place): \(message) (line \($0))" } ?? "\(place): \(message)"
    }
}

/// A config file that could not be accepted, with every problem found in it.
public struct ConfigError: Error, CustomStringConvertible {
    public var file: String
    public var issues: [ConfigIssue]
    public var description: String {
        "\(file): \(issues.count) problem\(issues.count == 1 ? "" : "s")\n"
            + issues.map { "  \($0)" }.joined(separator: "\n")
    }
}
