import ArgumentParser
import FlapBoard
import FlapConfig
import Foundation

/// `flapd calibrate`: live calibration against a running flapd (issue 35: start, step, flap,
/// mark, end — what the page does, for scripts), and `set`, the offline offset of old, which is
/// the default: `flapd calibrate --config F --module R,C --offset N` works as it did.
struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Calibrate GPIO modules: live against a running flapd (start, step, flap, mark, end), or set an offset offline.",
        discussion: """
            Live, with the board in front of you: `flapd calibrate start` (messages wait until the \
            end), then for each module `flapd calibrate step --module R,C` (or `flap`) until a flap \
            has just fallen, and `flapd calibrate mark --module R,C --showing A`: flapd saves the \
            module's offset and turns it to what the board should show. `flapd calibrate end` \
            (or 300 s without a request) gives the board back to its messages.
            """,
        subcommands: [SetOffset.self, Start.self, Step.self, Flap.self, Mark.self, End.self, Show.self],
        defaultSubcommand: SetOffset.self)

    typealias Request = CalibrationRequest

    /// A module's ROW,COL from 0.
    static func module(_ text: String) throws -> (row: Int, col: Int) {
        let rc = text.split(separator: ",").compactMap { Int($0) }
        guard rc.count == 2, rc.allSatisfy({ $0 >= 0 }) else { throw fail("--module: '\(text)' is not ROW,COL (from 0)") }
        return (rc[0], rc[1])
    }

    /// One request of a session as JSON; the answer printed.
    static func send(_ request: Request, _ api: LocalAPIOptions) throws {
        let body = try JSONEncoder().encode(request)
        print(try api.request("POST", "/calibration", body: body).body)
    }

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start calibrating a running flapd: messages wait until the end (or 300 s without a request).")
        @OptionGroup var api: LocalAPIOptions
        func run() throws { try Calibrate.send(Request(action: "start"), api) }
    }

    struct End: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End calibrating: the boards show their messages again.")
        @OptionGroup var api: LocalAPIOptions
        func run() throws { try Calibrate.send(Request(action: "end"), api) }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Whether a calibration session is on, and for how long yet.")
        @OptionGroup var api: LocalAPIOptions
        func run() throws { print(try api.request("GET", "/calibration").body) }
    }

    struct Step: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a module on by a step (or --steps N).")
        @OptionGroup var api: LocalAPIOptions
        @Option(help: "The board's id (default: the one stepper board).") var board: String?
        @Option(help: "The module, as ROW,COL from 0.") var module: String
        @Option(help: "Motor steps.") var steps = 1
        func run() throws {
            let m = try Calibrate.module(module)
            try Calibrate.send(Request(action: "step", board: board, row: m.row, col: m.col, steps: steps), api)
        }
    }

    struct Flap: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a module on to its next flap.")
        @OptionGroup var api: LocalAPIOptions
        @Option(help: "The board's id (default: the one stepper board).") var board: String?
        @Option(help: "The module, as ROW,COL from 0.") var module: String
        func run() throws {
            let m = try Calibrate.module(module)
            try Calibrate.send(Request(action: "flap", board: board, row: m.row, col: m.col), api)
        }
    }

    struct Mark: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say which flap a module shows now: flapd saves its offset and turns it to what the board should show.")
        @OptionGroup var api: LocalAPIOptions
        @Option(help: "The board's id (default: the one stepper board).") var board: String?
        @Option(help: "The module, as ROW,COL from 0.") var module: String
        @Option(help: "The flap it shows: a character (' ' for the blank).") var showing: String
        func run() throws {
            let m = try Calibrate.module(module)
            try Calibrate.send(Request(action: "mark", board: board, row: m.row, col: m.col, showing: .character(showing)), api)
        }
    }
}

struct SetOffset: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set a GPIO module's offset (the steps from its magnet to flap 0) in the state directory, flapd not running; `flapd home` then uses it.",
        discussion: """
            Home the board, look at the module: if it stands short of its blank flap by N steps,
            add N to its offset (fewer: subtract), set it here and home again. Offsets live in
            <state dir>/calibration.json, not in firmware.
            """)

    @Option(name: .shortAndLong, help: "The config file (for the board's size and the state directory).") var config: String
    @Option(help: "The board's id (default: the first).") var board: String?
    @Option(help: "The module, as ROW,COL from 0.") var module: String
    @Option(help: "Steps from the magnet to flap 0.") var offset: Int
    @Option(help: "The state directory (default: the config's state_dir, else $STATE_DIRECTORY).") var stateDir: String?

    func run() throws {
        let c = try loadConfig(config)
        guard let b = board.map({ id in c.boards.first { $0.id == id } }) ?? c.boards.first else { throw fail("--board: no board '\(board!)'") }
        let rc = module.split(separator: ",").compactMap { Int($0) }
        guard rc.count == 2, (0..<b.rows).contains(rc[0]), (0..<b.cols).contains(rc[1]) else {
            throw fail("--module: '\(module)' is not ROW,COL within \(b.rows) × \(b.cols)")
        }
        guard let dir = stateDir ?? c.stateDir ?? ProcessInfo.processInfo.environment["STATE_DIRECTORY"] else {
            throw fail("no state directory: give --state-dir or state_dir in the config")
        }
        let steps = b.gpio?.geometry.stepsPerRevolution ?? 0
        guard b.output == .gpio, (0..<max(steps, 1)).contains(offset) else {
            throw fail(b.output == .gpio ? "--offset: \(offset) is outside 0…\(steps - 1) (steps a turn)" : "board '\(b.id)' is not a gpio board")
        }
        try Calibration.set(offset, board: b.id, index: rc[0] * b.cols + rc[1], modules: b.rows * b.cols, in: dir)
        print("module \(rc[0]),\(rc[1]) of '\(b.id)': offset \(offset) saved in \(Calibration.path(dir)); `flapd home` applies it")
    }
}
