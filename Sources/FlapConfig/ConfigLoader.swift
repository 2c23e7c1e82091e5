import FlapWiring
import FlapCore
import FlapYAML
import Foundation
import Yams

/// Reads and validates `flapd.yaml`. YAML is read with Yams directly (the parser behind
/// swift-configuration's YAML provider) because a board config is a list of mappings, which
/// swift-configuration's flat key space cannot hold, and because every error must name its line.
public enum ConfigLoader {
    /// Environment variable that overrides `local_api.key`.
    public static let localAPIKeyVariable = "FLAPD_LOCAL_API_KEY"

    public static func load(file: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigError) -> FlapdConfig {
        // At most one byte past the limit is read: a file of any size costs no more than that.
        guard let handle = FileHandle(forReadingAtPath: file), let read = try? handle.read(upToCount: YAMLBudget.maxBytes + 1) else {
            throw ConfigError(file: file, issues: [ConfigIssue(path: "", line: nil, message: "cannot read the file")])
        }
        try? handle.close()
        let data = read
        guard data.count <= YAMLBudget.maxBytes else {
            let (message, line) = YAMLBudget.oversize(Array(data))
            throw ConfigError(file: file, issues: [ConfigIssue(path: "", line: line, message: message)])
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            let (line, column, byte) = firstNonUTF8(Array(data))
            throw ConfigError(file: file, issues: [ConfigIssue(path: "", line: line,
                message: "not UTF-8: byte 0x\(String(byte, radix: 16, uppercase: true)) at column \(column)")])
        }
        return try parse(text, file: file, environment: environment)
    }

    /// The config of a file, or without one the demo defaults (with the local API key from
    /// `FLAPD_LOCAL_API_KEY`, as a file would take it).
    public static func load(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigError) -> FlapdConfig {
        if let file { return try load(file: file, environment: environment) }
        return try parse("", file: "defaults", environment: environment)
    }

    public static func parse(_ text: String, file: String = "flapd.yaml",
                             environment: [String: String] = [:]) throws(ConfigError) -> FlapdConfig {
        if let (message, line) = YAMLBudget.problem(text) {
            throw ConfigError(file: file, issues: [ConfigIssue(path: "", line: line, message: message)])
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text, .basic)
        } catch {
            let line: Int? = switch error as? YamlError {
            case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): mark.line
            default: nil
            }
            let message = (error as? YamlError).map(yamlProblem) ?? "\(error)"
            throw ConfigError(file: file, issues: [ConfigIssue(path: "", line: line, message: "not valid YAML: \(message)")])
        }
        let issues = IssueList()
        let config = decode(ConfigNode(root, path: "", issues: issues), environment: environment)
        if !issues.all.isEmpty { throw ConfigError(file: file, issues: issues.all) }
        return config
    }

    /// Where the first byte that breaks UTF-8 is: its line and column (from 1) and its value.
    static func firstNonUTF8(_ bytes: [UInt8]) -> (line: Int, column: Int, byte: UInt8) {
        var line = 1, lineStart = 0, i = 0
        while i < bytes.count {
            let lead = bytes[i]
            let n = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0
            if n == 0 || i + n > bytes.count || String(validating: bytes[i..<(i + n)], as: UTF8.self) == nil {
                let column = (String(validating: bytes[lineStart..<i], as: UTF8.self)?.count ?? 0) + 1
                return (line, column, lead)
            }
            if lead == 0x0A { line += 1; lineStart = i + 1 }
            i += n
        }
        return (line, 1, 0)
    }

    private static func yamlProblem(_ e: YamlError) -> String {
        switch e {
        case .scanner(_, let p, _, _), .parser(_, let p, _, _), .composer(_, let p, _, _): p
        default: "\(e)"
        }
    }

    static func decode(_ root: ConfigNode, environment: [String: String]) -> FlapdConfig {
        var config = FlapdConfig()
        config.timing = timing(root.child("timing"), default: FlipTiming())
        config.motion = root.choice("motion", default: Motion.forward)
        config.transition = transition(root, default: .classic)
        let rt = root.child("realtime")
        config.realtime.priority = rt.int("priority", default: 0, in: 0...99)
        config.realtime.lockMemory = rt.bool("lock_memory", default: false)
        if rt.value("wake_latency_us") != nil {
            config.realtime.wakeLatencyMicros = rt.int("wake_latency_us", default: 0, in: 0...100_000)
        }
        config.realtime.spinMicros = rt.int("spin_us", default: config.realtime.spinMicros, in: 0...5_000)
        rt.rejectUnknownKeys()
        config.localAPI = localAPI(root.child("local_api"), environment: environment)
        config.sound = sound(root.child("sound"))
        config.stateDir = root.string("state_dir")
        config.messageAPI = messageAPI(root.child("message_api"), environment: environment)
        config.mqtt = mqtt(root.child("mqtt"), environment: environment)
        let quiet = root.child("quiet_hours")
        if quiet.node != nil {
            let from = timeOfDay(quiet, "from"), to = timeOfDay(quiet, "to")
            let messages = quiet.choice("messages", default: QuietHours.Messages.hold)
            if let from, let to { config.quietHours = QuietHours(from: from, to: to, messages: messages) }
        }
        quiet.rejectUnknownKeys()
        if let list = root.value("boards") {
            if let items = list.sequence, !items.isEmpty {
                config.boards = items.enumerated().map { i, node in
                    board(ConfigNode(node, path: "boards[\(i)]", issues: root.issues), defaults: config)
                }
            } else {
                root.issues.add("boards", list, "expected a non-empty list of boards")
            }
        } else {
            config.boards = [board(ConfigNode(nil, path: "boards[0]", issues: root.issues), defaults: config)]
        }
        var seen: Set<String> = []
        for (i, b) in config.boards.enumerated() where !seen.insert(b.id).inserted {
            root.issues.add("boards[\(i)].id", root.value("boards")?.sequence?[i]["id"], "'\(b.id)' is used by another board")
        }
        config.grids = grids(root, boards: config.boards)
        if let id = config.localAPI.board, !config.boards.contains(where: { $0.id == id }), !config.grids.contains(where: { $0.id == id }) {
            root.issues.add("local_api.board", root.child("local_api").value("board"),
                            "'\(id)' is not a board or grid (boards: \(config.boards.map(\.id).joined(separator: ", ")))")
        }
        config.zones = zones(root, config: config)
        config.timeZone = timeZone(root)
        if root.value("time_zone") != nil {
            // Quiet hours (of motion and of the clack) are read in the same zone as the schedule.
            config.quietHours?.timeZone = config.timeZone
            config.sound.player.quiet.timeZone = config.timeZone
        }
        config.sources = sources(root, environment: environment)
        config.schedule = schedule(root, sources: config.sources)
        root.rejectUnknownKeys()
        return config
    }

    static func timing(_ node: ConfigNode, default d: FlipTiming) -> FlipTiming {
        let ms: (Int64) -> Int = { Int($0 / 1_000_000) }
        let t = FlipTiming(
            flipMs: node.int("flip_ms", default: ms(d.flip), in: FlipTiming.flipMsRange),
            columnStaggerMs: node.int("column_stagger_ms", default: ms(d.columnStagger), in: 0...1000),
            rowStaggerMs: node.int("row_stagger_ms", default: ms(d.rowStagger), in: 0...1000))
        node.rejectUnknownKeys()
        return t
    }

    static func sound(_ node: ConfigNode) -> SoundConfig {
        var s = SoundConfig()
        s.enabled = node.bool("enabled", default: true)
        var p = ClackOptions()
        p.device = node.string("device") ?? p.device
        p.volume = Float(node.int("volume_percent", default: 80, in: 0...100)) / 100
        p.bufferMs = node.int("buffer_ms", default: p.bufferMs, in: 5...500)
        p.periodMs = node.int("period_ms", default: p.periodMs, in: 1...100)
        if p.periodMs * 2 > p.bufferMs {
            node.issues.add(node.sub("period_ms"), node.value("period_ms") ?? node.value("buffer_ms"),
                            "\(p.periodMs) ms must be at most half of buffer_ms (\(p.bufferMs) ms)")
        }
        let quiet = node.child("quiet_hours")
        if quiet.node != nil {
            p.quiet = DailySpan(from: timeOfDay(quiet, "from") ?? 0, to: timeOfDay(quiet, "to") ?? 0)
        }
        quiet.rejectUnknownKeys()
        let clack = node.child("clack")
        p.model.durationMs = Double(clack.int("duration_ms", default: 70, in: 50...100))
        p.model.levelSpread = Double(clack.int("level_variation_percent", default: 10, in: 0...50)) / 100
        p.model.pitchSpread = Double(clack.int("pitch_variation_percent", default: 4, in: 0...20)) / 100
        p.model.decaySpread = Double(clack.int("decay_variation_percent", default: 15, in: 0...50)) / 100
        let pitch = Double(clack.int("pitch_percent", default: 100, in: 50...200)) / 100
        p.model.modes = p.model.modes.map { ClackModel.Mode(hz: $0.hz * pitch, decayMs: $0.decayMs, level: $0.level) }
        p.model.thump.hz = Double(clack.int("thump_hz", default: 140, in: 40...400))
        clack.rejectUnknownKeys()
        s.player = p
        node.rejectUnknownKeys()
        return s
    }

    /// Minutes since midnight of an "HH:MM" value.
    static func timeOfDay(_ node: ConfigNode, _ key: String) -> Int? {
        guard let text = node.string(key) else {
            node.issues.add(node.sub(key), node.node, "missing (a time of day such as \"22:00\")"); return nil
        }
        let parts = text.split(separator: ":").compactMap { Int($0) }
        guard parts.count == 2, (0..<24).contains(parts[0]), (0..<60).contains(parts[1]) else {
            node.issues.add(node.sub(key), node.value(key), "'\(text)' is not a time of day HH:MM"); return nil
        }
        return parts[0] * 60 + parts[1]
    }

    static func localAPI(_ node: ConfigNode, environment: [String: String]) -> LocalAPIConfig {
        var api = LocalAPIConfig()
        api.enabled = node.bool("enabled", default: true)
        api.bind = node.string("bind") ?? api.bind
        api.port = node.int("port", default: api.port, in: 0...65535)
        api.board = node.string("board")
        api.key = SecretFile.secret(node, "key", environment: environment)
        if let v = environment[localAPIKeyVariable], !v.isEmpty { api.key = v }
        if api.key?.isEmpty == true { api.key = nil }
        api.enablementToken = SecretFile.secret(node, "enablement_token", environment: environment)
        if api.enablementToken?.isEmpty == true { api.enablementToken = nil }
        if api.enablementToken != nil, api.key == nil {
            let at = ["enablement_token", "enablement_token_env", "enablement_token_file"].first { node.value($0) != nil } ?? "enablement_token"
            node.issues.add(node.sub(at), node.value(at), "the enablement answers with the local API's key: set local_api.key (or FLAPD_LOCAL_API_KEY) too")
        }
        if let problem = api.exposureProblem { node.issues.add(node.sub("bind"), node.value("bind"), problem) }
        node.rejectUnknownKeys()
        return api
    }

    static func board(_ node: ConfigNode, defaults: FlapdConfig) -> BoardConfig {
        var b = BoardConfig()
        b.id = node.string("id") ?? (node.path == "boards[0]" ? "wall" : node.path)
        if node.value("model") != nil { b.model = node.choice("model", default: BoardConfig.Model.flagship) }
        let size = b.model?.size ?? (rows: 6, cols: 22)
        b.rows = node.int("rows", default: size.rows, in: 1...128)
        b.cols = node.int("cols", default: size.cols, in: 1...128)
        if let model = b.model, (b.rows, b.cols) != model.size {
            node.issues.add(node.sub("model"), node.value("model"),
                            "a \(model.rawValue) is \(model.size.rows) × \(model.size.cols), but rows × cols say \(b.rows) × \(b.cols)")
        }
        b.output = node.choice("output", default: OutputKind.virtual)
        b.motion = node.choice("motion", default: defaults.motion)
        b.timing = timing(node.child("timing"), default: defaults.timing)
        b.transition = transition(node, default: defaults.transition)
        switch b.output {
        case .splitflap:
            b.drum = .splitflap52
            let bus = SerialBus.splitflap
            if let most = bus.maxModules, b.rows * b.cols > most {
                node.issues.add(node.sub("output"), node.value("output"),
                                "a splitflap display takes at most \(most) modules (its protocol's limit); this board has \(b.rows * b.cols) (\(b.rows) × \(b.cols))")
            }
            b.serial = serial(node.child("serial"), defaultBaud: bus.line.baud, defaultRetry: bus.retryMilliseconds)
        case .flapbus:
            let serialNode = node.child("serial")
            let home = serialNode.bool("home_at_start", default: false)
            let status = serialNode.int("status_seconds", default: 5, in: 1...3600)
            b.serial = serial(serialNode, defaultBaud: SerialBus.flapbus.line.baud, defaultRetry: SerialBus.flapbus.retryMilliseconds)
            b.serial?.homeAtStart = home
            b.serial?.statusSeconds = status
        case .krone, .omega:
            let bus: SerialBus = b.output == .krone ? .krone : .omega
            b.serial = serial(node.child("serial"), defaultBaud: bus.line.baud, defaultRetry: bus.retryMilliseconds,
                              defaultParity: bus.line.parity, modules: b.rows * b.cols)
        case .virtual, .gpio:
            // A virtual board has no physical drum: it shows all a Vestaboard can, colours too.
            if b.output == .virtual { b.drum = .extended }
            if node.value("serial") != nil {
                node.issues.add(node.sub("serial"), node.value("serial"), "only a serial output (splitflap, flapbus, krone, omega) has a serial port")
            }
        }
        if let spec = node.string("drum") {
            do { b.drum = try Drum.named[spec] ?? Drum(spec: spec) } catch {
                node.issues.add(node.sub("drum"), node.value("drum"),
                                "\(error) (name one of \(Drum.named.keys.sorted().joined(separator: ", ")), or list the flaps as text)")
            }
        }
        if b.output == .gpio {
            b.gpio = gpio(node.child("gpio"), modules: b.rows * b.cols, flaps: b.drum.count, flip: b.timing.flip)
        } else if node.value("gpio") != nil {
            node.issues.add(node.sub("gpio"), node.value("gpio"), "only output: gpio has gpio lines")
        }
        b.timing.powerGroups = powerGroups(node, rows: b.rows, cols: b.cols)
        let align = node.child("align")
        b.layout = Layout(horizontal: align.choice("horizontal", default: HorizontalAlignment.center),
                          vertical: align.choice("vertical", default: VerticalAlignment.center))
        align.rejectUnknownKeys()
        if let f = node.string("fallback") { b.fallback = glyph(f, on: b.drum, node: node, key: "fallback") ?? b.fallback }
        else if !b.drum.contains(.blank) { b.fallback = b.drum.glyphs[0] }
        if let subs = node.value("substitutions") {
            if let mapping = subs.mapping {
                for (k, v) in mapping {
                    let key = k.string ?? ""
                    if GlyphToken.parse(key).count != 1 {
                        node.issues.add(node.sub("substitutions.\(key)"), k, "a substitution replaces one character or {NN} code")
                    } else if let g = glyph(v.string ?? "", on: b.drum, node: node, key: "substitutions.\(key)", at: v) {
                        b.substitutes[key] = g
                    }
                }
            } else {
                node.issues.add(node.sub("substitutions"), subs, "expected a mapping of character: replacement")
            }
        }
        node.rejectUnknownKeys()
        return b
    }

    /// One glyph written as text (a character or `{NN}`) that must be on the drum.
    static func glyph(_ text: String, on drum: Drum, node: ConfigNode, key: String, at: Node? = nil) -> Glyph? {
        let place = at ?? node.value(key)
        let tokens = GlyphToken.parse(text)
        guard tokens.count == 1 else { node.issues.add(node.sub(key), place, "'\(text)' is not one glyph"); return nil }
        let g: Glyph? = switch tokens[0] {
        case .character(let c): Glyph(character: c)
        case .code(let n): Glyph(code: n)
        }
        guard let g, drum.contains(g) else { node.issues.add(node.sub(key), place, "'\(text)' is not on the board's drum"); return nil }
        return g
    }
}
