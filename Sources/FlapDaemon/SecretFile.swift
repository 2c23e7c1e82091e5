import Foundation

/// Reads a secret from a file that only its owner may read.
enum SecretFile {
    static func read(_ path: String, node: ConfigNode, key: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let data = FileManager.default.contents(atPath: path) else {
            node.issues.add(node.sub(key), node.value(key), "cannot read the file \(path)")
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
