import ArgumentParser
import FlapRelease
import FlapBoard
import FlapConfig
import FlapDaemon
import Logging

/// `flapd`: the Flapboard daemon and its tools.
@main
struct Flapd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flapd",
        abstract: "Drive a split-flap (or LED) message board: plan every flap, play it in real time.",
        version: Release.line,
        subcommands: [Run.self, Demo.self, Plan.self, Preview.self, CheckConfig.self, Send.self, Status.self, Home.self, Calibrate.self, SelfTest.self, SoundTest.self],
        defaultSubcommand: nil)
}

/// Options every command that logs shares.
struct LogOptions: ParsableArguments {
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info
    @Option(help: "Log format: journal (<N> priority prefixes, for systemd), plain, or auto (journal when stderr is the journal).")
    var logFormat: LogFormat = .auto

    enum LogFormat: String, ExpressibleByArgument, CaseIterable { case auto, journal, plain }

    func bootstrap() -> Logger {
        let level = logLevel
        let journal = logFormat == .journal || (logFormat == .auto && JournalLogHandler.stderrIsJournal())
        LoggingSystem.bootstrap { label in
            if journal {
                var handler = JournalLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "flapd")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// The config of a file (or the demo defaults), or exit 1 with every problem it has.
func loadConfig(_ file: String?) throws -> FlapdConfig {
    do { return try ConfigLoader.load(file: file) } catch { throw fail("\(error)") }
}

/// Prints a message to stderr and fails with exit code 1.
func fail(_ message: String) -> ExitCode {
    FileHandleOutput.standardError(message)
    return ExitCode(1)
}
