import FlapMessages
import FlapWiring
import FlapCore
import Yams

extension ConfigLoader {
    static func messageAPI(_ node: ConfigNode, environment: [String: String]) -> MessageAPIConfig? {
        guard node.node != nil else { return nil }
        var api = MessageAPIConfig(url: "", token: "")
        if let url = node.string("url") {
            if MessageAPIConfig.endpoints(of: url) == nil {
                node.issues.add(node.sub("url"), node.value("url"), "'\(url)' is not an http:// or https:// URL")
            }
            api.url = url
        } else {
            node.issues.add(node.sub("url"), node.node, "missing (the API's base URL, e.g. https://hub.example.org)")
        }
        // As local_api's key: the file's token (inline, _env, _file), the variable over it.
        var token = SecretFile.secret(node, "token", environment: environment)
        if let v = environment[messageAPITokenVariable], !v.isEmpty { token = v }
        if let token, !token.isEmpty {
            api.token = token
        } else {
            node.issues.add(node.sub("token"), node.node,
                            "missing (give token, token_env or token_file, or set \(messageAPITokenVariable))")
        }
        api.pingSeconds = Double(node.int("ping_seconds", default: Int(api.pingSeconds), in: 1...300))
        api.maxFrameBytes = node.int("max_frame_kib", default: api.maxFrameBytes / 1024, in: 1...4096) * 1024
        node.rejectUnknownKeys()
        return api
    }

    /// Environment variable that overrides `message_api.token`.
    public static let messageAPITokenVariable = "FLAPD_MESSAGE_API_TOKEN"

    static func zones(_ root: ConfigNode, config: FlapdConfig) -> [Zone] {
        guard let list = root.value("zones") else {
            guard config.messageAPI != nil, let b = config.boards.first else { return [] }
            return [Zone(board: 0, rows: 0..<b.rows, cols: 0..<b.cols, layout: b.layout)]
        }
        guard let items = list.sequence else {
            root.issues.add("zones", list, "expected a list of zones"); return []
        }
        var zones: [(zone: Zone, node: Node)] = []
        for (i, item) in items.enumerated() {
            let node = ConfigNode(item, path: "zones[\(i)]", issues: root.issues)
            if let zone = zone(node, config: config) { zones.append((zone, item)) }
        }
        for (i, a) in zones.enumerated() {
            for b in zones[..<i] where a.zone.overlaps(b.zone) {
                let index = items.firstIndex { $0 == a.node } ?? i
                root.issues.add("zones[\(index)]", a.node,
                                "overlaps zone rows \(b.zone.rows.lowerBound)…\(b.zone.rows.upperBound - 1), columns \(b.zone.cols.lowerBound)…\(b.zone.cols.upperBound - 1) of board '\(config.boards[b.zone.board].id)'")
            }
        }
        return zones.map(\.zone)
    }

    /// `grids: [{id, boards: [[left, right], …]}]`: boards addressed together, row by row.
    static func grids(_ root: ConfigNode, boards: [BoardConfig]) -> [BoardGrid] {
        guard let list = root.value("grids") else { return [] }
        guard let items = list.sequence else { root.issues.add("grids", list, "expected a list of grids"); return [] }
        var grids: [BoardGrid] = []
        var taken: Set<String> = Set(boards.map(\.id))
        for (i, item) in items.enumerated() {
            let node = ConfigNode(item, path: "grids[\(i)]", issues: root.issues)
            let id = node.string("id") ?? "grid\(i)"
            if !taken.insert(id).inserted { node.issues.add(node.sub("id"), node.value("id"), "'\(id)' is used by another board or grid") }
            var rows: [[Int]] = []
            var readable = true
            for (r, row) in (node.value("boards")?.sequence ?? []).enumerated() {
                var indexes: [Int] = []
                for (c, name) in (row.sequence ?? []).enumerated() {
                    if let b = boards.firstIndex(where: { $0.id == name.string }) { indexes.append(b) } else {
                        node.issues.add(node.sub("boards[\(r)][\(c)]"), name, "'\(name.string ?? "")' is not a board (boards: \(boards.map(\.id).joined(separator: ", ")))")
                        readable = false
                    }
                }
                rows.append(indexes)
            }
            node.rejectUnknownKeys()
            guard readable else { continue }
            do throws(BoardGrid.Problem) {
                grids.append(try BoardGrid(id: id, boards: rows, size: { (boards[$0].rows, boards[$0].cols) }, name: { boards[$0].id }))
            } catch {
                node.issues.add(node.sub("boards"), node.value("boards"), error.description)
            }
        }
        let members = grids.flatMap { $0.boards.joined() }
        if Set(members).count != members.count { root.issues.add("grids", list, "a board belongs to one grid at most") }
        return grids
    }

    private static func zone(_ node: ConfigNode, config: FlapdConfig) -> Zone? {
        var board = 0
        var known = true
        var grid: BoardGrid?
        if let id = node.string("board") {
            if let i = config.boards.firstIndex(where: { $0.id == id }) { board = i }
            else if let g = config.grids.first(where: { $0.id == id }) { grid = g; board = g.boards[0][0] }
            else {
                node.issues.add(node.sub("board"), node.value("board"),
                                "'\(id)' is not a board or grid (boards: \(config.boards.map(\.id).joined(separator: ", ")))")
                known = false
            }
        }
        let b = config.boards[board]
        let size = grid.map { ($0.rows, $0.cols, $0.id) } ?? (b.rows, b.cols, b.id)
        let rows = span(node, "rows", size: size.0, what: "rows", board: size.2)
        let cols = span(node, "cols", size: size.1, what: "columns", board: size.2)
        var senders = Zone.Senders.everyoneElse
        if let v = node.value("senders") {
            if v.string == "*" {
                senders = .everyoneElse
            } else if let names = v.sequence?.compactMap(\.string), names.count == v.sequence?.count, !names.isEmpty {
                senders = names == ["*"] ? .everyoneElse : .listed(names)
            } else {
                node.issues.add(node.sub("senders"), v, "expected \"*\" or a list of sender ids or usernames")
            }
        } else {
            node.issues.add(node.sub("senders"), node.node, "missing (\"*\" or a list of sender ids or usernames)")
        }
        let align = node.child("align")
        let layout = Layout(horizontal: align.choice("horizontal", default: b.layout.horizontal),
                            vertical: align.choice("vertical", default: b.layout.vertical))
        align.rejectUnknownKeys()
        let nameLine = node.bool("name_line", default: false)
        let rotate = node.value("rotate_seconds") == nil ? nil : Double(node.int("rotate_seconds", default: 10, in: 1...86_400))
        node.rejectUnknownKeys()
        guard known, let rows, let cols else { return nil }
        var zone = Zone(board: board, rows: rows, cols: cols, senders: senders, layout: layout, nameLine: nameLine, rotateSeconds: rotate)
        if let grid { zone.pieces = grid.pieces(rows: rows, cols: cols) }
        return zone
    }

    /// `[first, last]` (inclusive, from 0) within the board; absent: all of it.
    static func span(_ node: ConfigNode, _ key: String, size: Int, what: String, board: String) -> Range<Int>? {
        guard let v = node.value(key) else { return 0..<size }
        guard let pair = v.sequence?.compactMap(\.wholeNumber), pair.count == 2, v.sequence?.count == 2 else {
            node.issues.add(node.sub(key), v, "expected [first, last] \(what), counted from 0"); return nil
        }
        guard pair[0] <= pair[1], pair[0] >= 0, pair[1] < size else {
            node.issues.add(node.sub(key), v, "[\(pair[0]), \(pair[1])] is outside board '\(board)' (\(what) 0…\(size - 1))")
            return nil
        }
        return pair[0]..<(pair[1] + 1)
    }

    /// `serial: {port, baud, parity, stop_bits, flow_control, retry_ms}` of a serial output.
    /// A serial output's port and line; `modules`: a station bus of that many modules, whose
    /// addresses are `addresses` (row-major) or count up from `first_address`.
    static func serial(_ node: ConfigNode, defaultBaud: Int, defaultRetry: Int,
                       defaultParity: SerialLineSettings.Parity = .none, modules: Int? = nil) -> SerialConfig? {
        let port = node.string("port")
        if port == nil { node.issues.add(node.sub("port"), node.node, "missing (the serial port, e.g. /dev/ttyUSB0)") }
        let bauds = [1200, 2400, 4800, 9600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800]
        let baud = node.int("baud", default: defaultBaud, in: 1200...460_800)
        if !bauds.contains(baud) {
            node.issues.add(node.sub("baud"), node.value("baud"), "\(baud) is not one of \(bauds.map(String.init).joined(separator: ", "))")
        }
        let parity = node.choice("parity", default: defaultParity)
        let stopBits = node.int("stop_bits", default: 1, in: 1...2)
        let flow = node.choice("flow_control", default: SerialLineSettings.FlowControl.none)
        let retry = node.int("retry_ms", default: defaultRetry, in: 10...10_000)
        let addresses = modules.map { stationAddresses(node, modules: $0) } ?? []
        node.rejectUnknownKeys()
        guard let port else { return nil }
        var config = SerialConfig(port: port, settings: .init(baud: baud, parity: parity, stopBits: stopBits, flowControl: flow), retryMs: retry)
        config.addresses = addresses
        return config
    }

    /// One address (0–255) per module, row by row.
    static func stationAddresses(_ node: ConfigNode, modules: Int) -> [UInt8] {
        let first = node.int("first_address", default: 0, in: 0...255)
        guard let list = node.value("addresses") else {
            if first + modules > 256 {
                node.issues.add(node.sub("first_address"), node.value("first_address"),
                                "\(modules) modules from address \(first) run past 255; list them in addresses")
            }
            return (0..<modules).map { UInt8((first + $0) & 255) }
        }
        let items = list.sequence ?? []
        let numbers = items.compactMap(\.wholeNumber).filter { (0...255).contains($0) }
        guard list.sequence != nil, numbers.count == items.count, numbers.count == modules else {
            node.issues.add(node.sub("addresses"), list, "expected \(modules) addresses (one per module, row by row), each 0–255")
            return (0..<modules).map { UInt8($0 & 255) }
        }
        if Set(numbers).count != numbers.count {
            node.issues.add(node.sub("addresses"), list, "two modules share an address")
        }
        return numbers.map(UInt8.init)
    }
}
