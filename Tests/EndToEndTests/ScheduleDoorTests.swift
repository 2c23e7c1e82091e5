import EndToEndSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Issue 36, items 1 and 4, end to end with the real executable: a schedule entry is a sender
/// (shown at the start by what it said last, while that lives; replaced by a newer message of
/// the local API), `/status` lists it with its next and last time, and `flapd preview` prints
/// what the board would show at an instant.
@Suite struct ScheduleDoorTests {
    @Test(.timeLimit(.minutes(5))) func aScheduleEntrySpeaksAndStatusListsIt() async throws {
        let dir = try scratchDirectory("flap-schedule")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            time_zone: UTC
            local_api: { port: 0 }
            schedule:
              - { id: hello, at: "00:00", text: "HELLO FROM THE SCHEDULE" }
              - { id: never, at: "00:00", dates: ["2020-01-01"], text: "LONG AGO" }
            """.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/flapd.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?.contains { $0.contains("HELLO FROM THE") } == true }, "\(flapd.stdout)\n\(flapd.stderr)")

        let status = try #require(try await http("GET", port: port, path: "/status").json as? [String: Any])
        let entries = try #require(status["schedule"] as? [[String: Any]], "\(status)")
        let midnight = floor(Date().timeIntervalSince1970 / 86_400) * 86_400
        #expect(entries.count == 2)
        #expect(entries.first?["id"] as? String == "hello" && entries.first?["sender"] as? String == "@schedule:hello")
        #expect(entries.first?["last"] as? Double == midnight && entries.first?["next"] as? Double == midnight + 86_400, "\(entries)")
        #expect(entries.last?["next"] == nil && entries.last?["last"] == nil, "\(entries)")
        let zones = try #require(status["zones"] as? [[String: Any]])
        #expect(zones.first?["sender"] as? String == "hello", "\(zones)")

        // A newer message of the local API shows over it, in the same zone.
        let posted = try await http("POST", port: port, body: Data(#"{"text":"hi"}"#.utf8))
        #expect(posted.status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2] == "          HI          " }, "\(flapd.stdout)")
    }

    @Test(.timeLimit(.minutes(5))) func previewPrintsTheBoardAtAnInstant() async throws {
        let dir = try scratchDirectory("flap-preview")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            time_zone: Europe/Berlin
            schedule:
              - { id: morning, at: "07:00", days: [mon, tue, wed, thu, fri], for_seconds: 3600, priority: over, text: "GOOD MORNING {{date:EEEE}}" }
              - { id: countdown, every_minutes: 60, priority: idle, text: "{{days_until:12-24}} DAYS TO CHRISTMAS" }
            """.write(toFile: dir + "/flapd.yaml", atomically: true, encoding: .utf8)
        func preview(_ at: String) async throws -> (Int32, String, String) {
            let p = try FlapdProcess(["preview", "--config", dir + "/flapd.yaml", "--at", at])
            let code = await p.waitForExit()
            return (code, p.stdout, p.stderr)
        }
        let (code, out, err) = try await preview("2026-12-24T07:30")
        #expect(code == 0, "\(err)")
        #expect(out.contains("at 2026-12-24 07:30:00 +01:00 Thu (Europe/Berlin)"), "\(out)")
        #expect(frames(in: out).first == ["", "", "GOOD MORNING THURSDAY", "", "", ""].map { pad($0) }, "\(out)")
        #expect(out.contains("schedule countdown: shows \"0 DAYS TO CHRISTMAS\"; next 2026-12-24 08:00:00 +01:00 Thu"), "\(out)")
        // A Saturday evening: the morning's message is gone, the idle countdown shows.
        let (_, evening, _) = try await preview("2026-12-26T20:15")
        #expect(frames(in: evening).first?[2] == pad("363 DAYS TO CHRISTMAS"), "\(evening)")
        #expect(evening.contains("schedule morning: shows nothing; next 2026-12-28 07:00:00 +01:00 Mon"), "\(evening)")
        let (bad, _, said) = try await preview("2026-02-30T07:00")
        #expect(bad == 1 && said.contains("--at: '2026-02-30T07:00' is not an instant"), "\(said)")
    }

    /// Issue 36, item 7: the README's three pictures are what `flapd preview` prints for the
    /// example config at their instants.
    @Test(.timeLimit(.minutes(5))) func theReadmePicturesAreWhatPreviewPrints() async throws {
        let root = QEMUGuest.repository.path
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8).components(separatedBy: "\n")
        var pictures: [(at: String, lines: [String])] = []
        for (i, line) in readme.enumerated() where line.hasPrefix("at 2026-12-22 ") {
            pictures.append((line, Array(readme[(i + 1)...(i + 8)])))
        }
        #expect(pictures.count == 3)
        for (heading, frame) in pictures {
            let instant = heading.split(separator: " ")[1] + "T" + heading.split(separator: " ")[2].prefix(5)
            let p = try FlapdProcess(["preview", "--config", root + "/hardware/examples/schedule.yaml", "--at", String(instant),
                                      "--source", "family=\(root)/hardware/examples/schedule/family.ics",
                                      "--source", "weather=\(root)/hardware/examples/schedule/weather.json"])
            #expect(await p.waitForExit() == 0, "\(p.stderr)")
            let printed = p.stdout.components(separatedBy: "\n")
            #expect(printed.first == heading, "\(p.stdout)")
            #expect(Array(printed.dropFirst(2).prefix(8)) == frame, "README:\n\(frame.joined(separator: "\n"))\npreview:\n\(p.stdout)")
        }
    }

    /// A row of 22 columns, centred as the default layout centres it.
    func pad(_ text: String) -> String {
        let left = (22 - text.count) / 2
        return String(repeating: " ", count: left) + text + String(repeating: " ", count: 22 - left - text.count)
    }
}
