import ArgumentParser
import FlapBoard
import FlapConfig
import FlapTerminal
import Foundation

struct Preview: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what each board would show at an instant, from the config's schedule.",
        discussion: """
            Each schedule entry's message as it would be then (what it said last, while that still \
            lives), routed to its zones and composed as flapd does. People's messages are not in \
            it; a rotating zone shows its newest message. Then each entry: what it shows, and when \
            it speaks next. Example: flapd preview --config flapd.yaml --at 2026-12-24T07:30
            """)

    @Option(name: .shortAndLong, help: "The config file (YAML).")
    var config: String
    @Option(help: "The instant: YYYY-MM-DDTHH:MM[:SS] in the config's time zone, or with Z or ±HH:MM (default: now).")
    var at: String?

    func run() throws {
        let config = try loadConfig(self.config)
        let t = try at.map { try Self.instant($0, in: config.calendar) } ?? Date().timeIntervalSince1970
        let preview = SchedulePreview(config: config, at: t)
        let time = { (t: Double) in Self.show(t, config.calendar) }
        print("at \(time(t)) (\(config.timeZone.identifier))")
        for (i, frame) in preview.frames.enumerated() {
            print("board \(config.boards[i].id):")
            print(PlainFrame.render(frame, heart: config.boards[i].heart), terminator: "")
        }
        for (entry, shows, next) in preview.entries {
            let now = shows.map { m in "shows \"\(m.content)\"" + (m.duration == nil ? "" : " until \(time(m.expiresAt))") } ?? "shows nothing"
            print("schedule \(entry.id): \(now); next \(next.map(time) ?? "never")")
        }
        for note in preview.notes { print("note: \(note)") }
    }

    /// An instant of `--at`: local time in the calendar's zone, unless it gives its own offset.
    static func instant(_ text: String, in calendar: Calendar) throws -> Double {
        let iso = ISO8601DateFormatter()
        if let d = iso.date(from: text) { return d.timeIntervalSince1970 }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = calendar
        f.timeZone = calendar.timeZone
        for pattern in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            f.dateFormat = pattern
            if text.count <= 19, let d = f.date(from: text) { return d.timeIntervalSince1970 }
        }
        throw fail("--at: '\(text.prefix(40))' is not an instant YYYY-MM-DDTHH:MM (local to the config's time zone) or YYYY-MM-DDTHH:MM:SSZ")
    }

    static func show(_ t: Double, _ calendar: Calendar) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = calendar
        f.timeZone = calendar.timeZone
        f.dateFormat = "yyyy-MM-dd HH:mm:ss ZZZZZ EEE"
        return f.string(from: Date(timeIntervalSince1970: t))
    }
}
