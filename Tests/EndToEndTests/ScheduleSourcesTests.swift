import EndToEndSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Issue 36, items 2, 4 and 5, end to end: a JSON document and an iCalendar feed from a local
/// HTTP server fill a schedule's texts on the real flapd; sources that hang, answer 10 GB,
/// answer what is not JSON, answer 503 or expand without end each cost bounded time, are named
/// in `/status` with what went wrong, and never stop the wall; the values kept in the state
/// folder are what `flapd preview` reads.
@Suite struct ScheduleSourcesTests {
    static let family = """
        BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VEVENT\r\nSUMMARY:Dentist\r\nDTSTART:20260101T100000Z\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n
        """

    /// `/status` as JSON, once `ready` says it is.
    func status(port: Int, until ready: @escaping ([String: Any]) -> Bool) async throws -> [String: Any]? {
        for _ in 0..<960 {
            if let s = try await http("GET", port: port, path: "/status").json as? [String: Any], ready(s) { return s }
            try await Task.sleep(for: .milliseconds(250))
        }
        return nil
    }

    func sources(_ status: [String: Any]) -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for e in status["schedule"] as? [[String: Any]] ?? [] {
            for s in e["sources"] as? [[String: Any]] ?? [] { out[s["id"] as! String] = s }
        }
        return out
    }

    @Test(.timeLimit(.minutes(6))) func sourcesFillTheTextsAndHostileOnesAreNamed() async throws {
        let server = SourceServer(calendar: Self.family)
        let web = try await server.start()
        defer { server.stop() }
        let dir = try scratchDirectory("flap-sources")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = "http://127.0.0.1:\(web)"
        try """
            time_zone: UTC
            local_api: { port: 0 }
            state_dir: \(dir)/state
            zones: [{ rows: [0, 5], senders: "*" }]
            sources:
              - { id: weather, json: "\(base)/weather.json", every_minutes: 1 }
              - { id: family, ical: "\(base)/family.ics", window_hours: 48, count: 2 }
              - { id: hang, json: "\(base)/hang", timeout_seconds: 2 }
              - { id: huge, json: "\(base)/huge", max_kib: 64, timeout_seconds: 120 }
              - { id: bad, json: "\(base)/bad.json", timeout_seconds: 120 }
              - { id: down, json: "\(base)/down", timeout_seconds: 120 }
              - { id: bomb, ical: "\(base)/bomb.ics", timeout_seconds: 120 }
            schedule:
              - { id: weather, every_minutes: 1, for_seconds: 600, priority: over, text: "NOW {{weather:current.temperature_2m|0}} C\\n{{family:events[0].time}} {{family:events[0].summary}}" }
              - { id: hung, at: "00:00", text: "{{hang}} {{huge}} {{bad}} {{down}}" }
              - { id: bombed, at: "00:00", priority: idle, text: "{{bomb}}" }
            """.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/flapd.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        // The weather and the calendar come, and the entry that reads them speaks (late: at the
        // start they had no value yet).
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?.contains { $0.contains("NOW 4 C") } == true }, "\(flapd.stdout)\n\(flapd.stderr)")
        #expect(frames(in: flapd.stdout).last?.contains { $0.contains("10:00 DENTIST") } == true, "\(flapd.stdout)")

        // Each hostile source is named with what went wrong; the entry that reads them waits.
        // (The test's own server answers all but `hang`: given 120 s, not the default 10 — a CI
        // that starved this process saw `huge` and `down` named "no answer within 10 s".)
        let named = try await status(port: port) { s in
            let k = self.sources(s)
            return ["hang", "huge", "bad", "down"].allSatisfy { k[$0]?["last_error"] != nil } && k["bomb"]?["fetched"] != nil
        }
        let found = try #require(named.map(sources), "\(flapd.stderr)")
        #expect((found["hang"]?["last_error"] as? String)?.contains("no answer within 2 s") == true, "\(found)")
        #expect((found["huge"]?["last_error"] as? String)?.contains("answered more than 64 KiB") == true, "\(found)")
        #expect((found["bad"]?["last_error"] as? String)?.hasPrefix("not JSON") == true, "\(found)")
        #expect((found["down"]?["last_error"] as? String)?.contains("answered 503") == true, "\(found)")
        #expect(found["weather"]?["stale"] as? Bool == false && found["weather"]?["last_error"] == nil)
        let hung = (named?["schedule"] as? [[String: Any]])?.first { $0["id"] as? String == "hung" }
        #expect(hung?["skipped"] != nil && hung?["last"] == nil, "\(String(describing: hung))")
        #expect(await flapd.waitUntil { _, e in e.contains("source hang: no answer within 2 s; its last good value stays") }, "\(flapd.stderr)")

        // The wall never stopped: a message of the local API still shows (under the weather's `over`
        // in the * zone, over the whole board of its own zone).
        let posted = try await http("POST", port: port, body: Data(#"{"text":"still here"}"#.utf8))
        #expect(posted.status == 201)

        // A new value is fetched on the interval; the kept one is what preview reads.
        #expect(FileManager.default.fileExists(atPath: dir + "/state/sources/weather"))
        let preview = try FlapdProcess(["preview", "--config", dir + "/flapd.yaml", "--at", ISO8601DateFormatter().string(from: Date())])
        #expect(await preview.waitForExit() == 0, "\(preview.stderr)")
        #expect(preview.stdout.contains("schedule weather: shows \"NOW 4 C / 10:00 Dentist\""), "\(preview.stdout)")
        #expect(preview.stdout.contains("schedule hung: shows nothing (a source it reads is stale or has no value)"), "\(preview.stdout)")
    }
}
