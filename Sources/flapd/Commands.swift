import ArgumentParser
import FlapBoard
import FlapCore
import FlapDaemon
import FlapSound
import Foundation

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the daemon with a config file: boards, outputs and the local API as it says.")

    @Option(name: .shortAndLong, help: "The config file (YAML).")
    var config: String
    @OptionGroup var output: OutputOptions
    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = log.bootstrap()
        let config = try loadConfig(self.config)
        var options = output.daemonOptions()
        options.configFile = self.config
        try await Daemon(config: config, options: options, logger: logger).run()
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a 6 x 22 virtual board on stdout, fed by the local API (no config needed).",
        discussion: """
            On a terminal the board flips live in colour; otherwise (or with --plain) each settled \
            board prints as a text frame. Post to it: curl -X POST -d '{"text":"HELLO"}' http://127.0.0.1:7000/local-api/message
            """)

    @Option(help: "Play this message from a blank board at real speed, print the final board and exit (repeat to play several in order).")
    var once: [String] = []
    @Option(help: "Address the local API listens on.")
    var bind: String?
    @Option(help: "Port of the local API (0: any free port, logged at start).")
    var port: Int?
    @Option(help: "Key the local API requires (default: the FLAPD_LOCAL_API_KEY environment variable, else none).")
    var key: String?
    @Option(name: .shortAndLong, help: "Start from this config file instead of the demo defaults.")
    var config: String?
    @OptionGroup var output: OutputOptions
    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = log.bootstrap()
        var config = try loadConfig(self.config)
        if let bind { config.localAPI.bind = bind }
        if let port {
            guard (0...65535).contains(port) else { throw fail("--port: \(port) is outside 0…65535") }
            config.localAPI.port = port
        }
        if let key { config.localAPI.key = key.isEmpty ? nil : key }
        var options = output.daemonOptions(once: once)
        options.configFile = self.config
        try await Daemon(config: config, options: options, logger: logger).run()
    }
}

/// How `run` and `demo` show the board and what else they write.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print plain text frames instead of the live board, even on a terminal.")
    var plain = false
    @Option(help: "Write one JSON line per flip (planned and actual instants) to this file; - for stderr.")
    var trace: String?
    @Flag(help: "No clack, whatever the config says (the sound goes to ALSA 'default' otherwise).")
    var noSound = false
    @Option(help: "Keep the board state (flap positions, target frames) in this folder across restarts (default: the config's state_dir, else $STATE_DIRECTORY, else not kept).")
    var stateDir: String?

    func daemonOptions(once: [String] = []) -> Daemon.Options {
        var options = Daemon.Options()
        options.plain = plain
        options.once = once
        options.tracePath = trace
        options.noSound = noSound
        options.stateDir = stateDir
        return options
    }
}

struct Plan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print, as JSON, the flip plan of one transition (moving modules only, times in ms).")

    @Option(help: "The message to change to (laid out as the board would).")
    var to: String
    @Option(help: "The message the board shows before (default: blank).")
    var from: String = ""
    @Option(name: .shortAndLong, help: "Take the board's size, drum, timing and motion from this config file.")
    var config: String?
    @Option(help: "Which board of the config (its id; default: the first).")
    var board: String?
    @OptionGroup var transition: TransitionOptions

    func run() throws {
        let config = try loadConfig(self.config)
        guard let b = board.map({ id in config.boards.first { $0.id == id } }) ?? config.boards.first else {
            throw fail("--board: '\(board ?? "")' is not a board of the config (boards: \(config.boards.map(\.id).joined(separator: ", ")))")
        }
        let mapper = b.mapper
        let before = b.layout.place(from, rows: b.rows, cols: b.cols, mapper: mapper)
        let after = b.layout.place(to, rows: b.rows, cols: b.cols, mapper: mapper)
        for cut in before.cut + after.cut { FileHandleOutput.standardError("warning: cut, did not fit: \(cut)") }
        let chosen = try transition.style(over: b.transition)
        let plan = b.plan(from: before.frame, to: after.frame, style: chosen)
        print(PlanJSON.render(plan))
    }
}

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config file; name every problem by key path and line. Exit 1 when invalid.")

    @Argument(help: "The config file (YAML).")
    var file: String

    func run() throws {
        let config = try loadConfig(file)
        let boards = config.boards.map { "\($0.id) \($0.rows)×\($0.cols) \($0.drum.count) flaps \($0.output.rawValue)" }
        print("\(file): OK — \(config.boards.count) board\(config.boards.count == 1 ? "" : "s"): \(boards.joined(separator: "; "))")
    }
}

struct SoundTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sound-test",
        abstract: "Play a single clack, a row cascade and a full-board change through ALSA; exit 1 if no sound device works.")

    @Option(help: "The ALSA device (default: the config's, else 'default').")
    var device: String?
    @Option(name: .shortAndLong, help: "Take the board, timing and sound settings from this config file.")
    var config: String?
    @Flag(help: "Print one JSON object: the stream's clock origin, every planned clack instant (monotonic ns) and the counters.")
    var json = false

    func run() throws {
        var config = try loadConfig(self.config)
        if let device { config.sound.player.device = device }
        let say: (String) -> Void = json ? { _ in } : { print($0) }
        say("clacks through ALSA device '\(config.sound.player.device)'")
        do {
            let report = try FlapBoard.SoundTest.run(config: config, say: say)
            let s = report.counters
            if json {
                print("{\"rate\":\(s.rate),\"origin_ns\":\(s.origin),\"clacks\":\(s.clacks),\"late\":\(s.late),\"dropped\":\(s.dropped),"
                    + "\"underruns\":\(s.underruns),\"remaps\":\(s.remaps),\"peak\":\(s.peak),"
                    + "\"clacks_ns\":[\(report.clacks.map(String.init).joined(separator: ","))]}")
                return
            }
            say("played \(s.clacks) clacks: \(s.late) late, \(s.dropped) dropped (over 50 ms late), \(s.underruns) underruns, \(s.remaps) clock re-maps, peak \(String(format: "%.2f", s.peak)) of full scale")
        } catch {
            throw fail("sound-test: \(error)")
        }
    }
}
