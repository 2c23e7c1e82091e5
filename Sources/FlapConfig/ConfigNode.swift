import Yams

/// Reads one YAML mapping of the config, collecting every problem with its key path and line
/// instead of stopping at the first.
final class ConfigNode {
    let node: Node?
    let path: String
    let issues: IssueList
    private var known: Set<String> = []

    init(_ node: Node?, path: String, issues: IssueList) {
        self.node = node
        self.path = path
        self.issues = issues
        if let node, node.mapping == nil, !node.isNull {
            issues.add(path, node, "expected a mapping of keys")
        }
    }

    func child(_ key: String) -> ConfigNode {
        known.insert(key)
        return ConfigNode(value(key), path: sub(key), issues: issues)
    }

    func value(_ key: String) -> Node? {
        known.insert(key)
        guard let v = node?.mapping?[key], !v.isNull else { return nil }
        return v
    }

    func sub(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func int(_ key: String, default d: Int, in range: ClosedRange<Int>) -> Int {
        guard let v = value(key) else { return d }
        guard let n = v.wholeNumber else { issues.add(sub(key), v, "\(show(v)) is not a whole number"); return d }
        guard range.contains(n) else {
            issues.add(sub(key), v, "\(n) is outside \(range.lowerBound)…\(range.upperBound)"); return d
        }
        return n
    }

    func bool(_ key: String, default d: Bool) -> Bool {
        guard let v = value(key) else { return d }
        guard let b = v.truth else { issues.add(sub(key), v, "\(show(v)) is not true or false"); return d }
        return b
    }

    func string(_ key: String) -> String? {
        guard let v = value(key) else { return nil }
        guard v.scalar != nil, let s = v.string else { issues.add(sub(key), v, "expected text"); return nil }
        return s
    }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String, default d: T) -> T where T.RawValue == String {
        guard let v = value(key) else { return d }
        guard let s = v.string, let c = T(rawValue: s) else {
            issues.add(sub(key), v, "\(show(v)) is not one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
            return d
        }
        return c
    }

    /// Reports keys that nothing asked for (typos), naming the keys that are known.
    func rejectUnknownKeys() {
        guard let mapping = node?.mapping else { return }
        for (k, _) in mapping {
            let key = k.string ?? "?"
            if !known.contains(key) {
                issues.add(sub(key), k, "unknown key (known here: \(known.sorted().joined(separator: ", ")))")
            }
        }
    }

    func show(_ v: Node) -> String {
        if let s = v.scalar?.string { return "'\(s)'" }
        return v.sequence != nil ? "a list" : "a mapping"
    }
}

/// YAML's null, whole numbers and booleans, read from plain scalars. The config is composed with
/// `Resolver.basic`, so every scalar arrives as text: Yams' default resolver matches each scalar
/// against regular expressions compiled through ICU, which put a megabyte and more of ICU into
/// the daemon's resident memory for a dozen keys.
extension Node {
    /// A plain scalar's text (a quoted one is always text).
    private var plain: String? {
        guard case .scalar(let s) = self, s.style == .plain else { return nil }
        return s.string
    }

    /// `~`, `null` or nothing, unquoted.
    var isNull: Bool { plain.map { ["", "~", "null", "Null", "NULL"].contains($0) } ?? false }

    /// An unquoted whole number: decimal, with an optional sign and `_` between digits.
    var wholeNumber: Int? {
        guard let p = plain, !p.hasPrefix("_"), !p.hasSuffix("_") else { return nil }
        return Int(p.replacingOccurrences(of: "_", with: ""))
    }

    /// An unquoted true / false (also yes / no, on / off, in any case, as YAML 1.1 has it).
    var truth: Bool? {
        switch plain?.lowercased() {
        case "true", "yes", "on": true
        case "false", "no", "off": false
        default: nil
        }
    }
}

/// The problems found so far.
final class IssueList {
    private(set) var all: [ConfigIssue] = []
    func add(_ path: String, _ node: Node?, _ message: String) {
        all.append(ConfigIssue(path: path, line: node?.mark?.line, message: message))
    }
}
