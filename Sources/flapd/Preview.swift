import ArgumentParser
import FlapBoard
import FlapConfig
import FlapMessages
import FlapNet
import FlapTerminal
import Foundation
import Logging

struct Preview: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what each board would show at an instant, from the config's schedule.",
        discussion: """
            Each schedule entry's message as it would be then (what it said last, while that still \
            lives), routed to its zones and composed as flapd does. People's messages are not in \
            it; a rotating zone shows its newest message. Then each entry: what it shows, and when \
            it speaks next. Sources are read as the running flapd last kept them (in the state \
            folder's sources/), or from files given with --source. \
            Example: flapd preview --config flapd.yaml --at 2026-12-24T07:30 --source weather=forecast.json
            """)

    @Option(name: .shortAndLong, help: "The config file (YAML).")
    var config: String
    @Option(help: "The instant: YYYY-MM-DDTHH:MM[:SS] in the config's time zone, or with Z or +HH:MM or -HH:MM (default: now).")
    var at: String?
    @Option(name: .customLong("source"), help: "A source's value from a file: ID=FILE (repeat for several); it counts as fetched at --at.")
    var sourceFiles: [String] = []
    @Option(help: "The state folder whose kept source values to read (default: the config's state_dir, else $STATE_DIRECTORY).")
    var stateDir: String?

    func run() throws {
        let config = try loadConfig(self.config)
        let t = try at.map { try Self.instant($0, in: config.calendar) } ?? Date().timeIntervalSince1970
        let folder = (stateDir ?? config.stateDir ?? ProcessInfo.processInfo.environment["STATE_DIRECTORY"]).map { $0 + "/sources" }
        let sources = ScheduleSources(configs: config.sources, folder: folder, logger: Logger(label: "preview"), now: { t })
        for given in sourceFiles {
            let parts = given.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw fail("--source: '\(given.prefix(60))' is not ID=FILE") }
            do throws(BoundedFetch.Problem) { try sources.take(parts[0], file: parts[1]) } catch { throw fail("--source \(parts[0]): \(error)") }
        }
        let preview = SchedulePreview(config: config, at: t, sources: sources)
        let time = { (t: Double) in Self.show(t, config.calendar) }
        print("at \(time(t)) (\(config.timeZone.identifier))")
        for (i, frame) in preview.frames.enumerated() {
            print("board \(config.boards[i].id):")
            print(PlainFrame.render(frame, heart: config.boards[i].heart), terminator: "")
        }
        for (entry, shows, next) in preview.entries {
            let stale = !entry.sources.isEmpty && !sources.areFresh(entry.sources, at: t)
            let now = shows.map { m in "shows \"\(m.content.replacingOccurrences(of: "\n", with: " / "))\"" + (m.duration == nil ? "" : " until \(time(m.expiresAt))") }
                ?? (stale ? "shows nothing (a source it reads is stale or has no value)" : "shows nothing")
            print("schedule \(entry.id): \(now); next \(next.map(time) ?? "never")")
        }
        for note in preview.notes { print("note: \(note)") }
    }

    /// An instant of `--at`: local time in the calendar's zone, unless it gives its own offset.
    static func instant(_ text: String, in calendar: Calendar) throws -> Double {
        let iso = ISO8601DateFormatter()
        if let d = iso.date(from: text) { return d.timeIntervalSince1970 }
        for pattern in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            if text.count <= 19, let d = DateFormatter.posix(pattern, in: calendar).date(from: text) { return d.timeIntervalSince1970 }
        }
        throw fail("--at: '\(text.prefix(40))' is not an instant YYYY-MM-DDTHH:MM (local to the config's time zone) or YYYY-MM-DDTHH:MM:SSZ")
    }

    static func show(_ t: Double, _ calendar: Calendar) -> String {
        DateFormatter.posix("yyyy-MM-dd HH:mm:ss ZZZZZ EEE", in: calendar).string(from: Date(timeIntervalSince1970: t))
    }
}
