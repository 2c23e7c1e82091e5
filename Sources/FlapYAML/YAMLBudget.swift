import CYaml

/// Limits on a config's YAML, checked on libyaml's event stream before Yams composes it: Yams
/// expands every alias into a copy and compares mapping keys whole, so a few lines of nested
/// aliases ("billion laughs", above all as mapping keys) would take exponential time and memory.
/// Here an alias counts as many nodes as it expands to, so the work stays linear in what the
/// budget allows. flapd's config and flaphub's are read through it.
public enum YAMLBudget {
    /// Largest config file.
    public static let maxBytes = 1 << 20
    /// Deepest nesting of mappings and lists.
    public static let maxDepth = 32
    /// Most nodes the document may hold with every alias expanded.
    public static let maxNodes = 100_000

    /// A file past `maxBytes`, named where it passes the limit: the line and column of its
    /// first byte beyond it (what an editor shows, to cut the file there).
    public static func oversize(_ bytes: [UInt8]) -> (message: String, line: Int) {
        var line = 1, column = 1
        for b in bytes.prefix(maxBytes) {
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return ("the file is larger than \(maxBytes / 1024) KiB (\(maxBytes) bytes): it passes the limit at column \(column)", line)
    }

    /// The first limit the text exceeds, as a problem and its line (from 1); nil when within
    /// every limit or when libyaml cannot read it (composing then names the syntax error).
    public static func problem(_ text: String) -> (message: String, line: Int?)? {
        var bytes = Array(text.utf8)
        guard bytes.count <= maxBytes else { return oversize(bytes) }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        return bytes.withUnsafeMutableBufferPointer { buffer -> (String, Int?)? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var open: [(anchor: String?, nodes: Int)] = []
            var anchors: [String: Int] = [:]
            var total = 0
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                let line = Int(event.start_mark.line) + 1
                var added = 0, anchor: String?
                switch event.type {
                case YAML_STREAM_END_EVENT: return nil
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    guard open.count < maxDepth else { return ("nested deeper than \(maxDepth) levels", line) }
                    let a = event.type == YAML_SEQUENCE_START_EVENT ? event.data.sequence_start.anchor : event.data.mapping_start.anchor
                    open.append((name(a), 1))
                    total += 1
                    continue
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    guard let closed = open.popLast() else { return nil }
                    anchor = closed.anchor
                    added = closed.nodes
                    if let anchor { anchors[anchor] = added }
                    if !open.isEmpty { open[open.count - 1].nodes += added }
                    continue
                case YAML_SCALAR_EVENT:
                    added = 1
                    total += 1
                    if let a = name(event.data.scalar.anchor) { anchors[a] = 1 }
                case YAML_ALIAS_EVENT:
                    guard let a = name(event.data.alias.anchor), let size = anchors[a] else { return nil }
                    added = size
                    total += size
                default: continue
                }
                guard total <= maxNodes else {
                    return ("aliases expand to more than \(maxNodes) nodes", line)
                }
                if !open.isEmpty { open[open.count - 1].nodes += added }
            }
        }
    }

    private static func name(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        p.map { String(cString: $0) }
    }
}
