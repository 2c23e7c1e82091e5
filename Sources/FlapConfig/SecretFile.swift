import FlapInput
import Foundation

/// Reads a secret from a file that only its owner may read.
enum SecretFile {
    /// A secret given inline (`KEY`), by environment variable (`KEY_env`) or by file
    /// (`KEY_file`); the later ones win.
    static func secret(_ node: ConfigNode, _ key: String, environment: [String: String]) -> String? {
        var secret = node.string(key)
        if let variable = node.string("\(key)_env") {
            if let v = environment[variable], !v.isEmpty { secret = v } else {
                node.issues.add(node.sub("\(key)_env"), node.value("\(key)_env"), "the environment variable \(variable) is not set")
            }
        }
        if let path = node.string("\(key)_file") { secret = read(path, node: node, key: "\(key)_file") ?? secret }
        return secret
    }

    static func read(_ path: String, node: ConfigNode, key: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let data = try? BoundedFile.read(path, maxBytes: 64 << 10) else {
            node.issues.add(node.sub(key), node.value(key), "cannot read the file \(path) (or it is larger than 64 KiB)")
            return nil
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        if mode & 0o077 != 0 {
            node.issues.add(node.sub(key), node.value(key),
                            "\(path) is readable by others (mode \(String(mode, radix: 8))): chmod 600 it")
            return nil
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
