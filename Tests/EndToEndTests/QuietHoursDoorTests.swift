import EndToEndSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Issue 15, item 7, end to end: in quiet hours the local API keeps a message for later (202)
/// and `/status` says what waits; `forced` goes through; `/status` and `/metrics` count every
/// module's flips.
@Suite struct QuietHoursDoorTests {
    @Test(.timeLimit(.minutes(5))) func quietHoursHoldAndStatusSaysWhatWaits() async throws {
        let dir = try scratchDirectory("flap-quiet")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func time(_ offset: Double) -> String {
            let c = Calendar.current.dateComponents([.hour, .minute], from: Date().addingTimeInterval(offset))
            return String(format: "%02d:%02d", c.hour!, c.minute!)
        }
        try "quiet_hours: { from: \"\(time(-3600))\", to: \"\(time(3600))\", messages: hold }\nlocal_api: { port: 0 }\n"
            .write(toFile: dir + "/quiet.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/quiet.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")

        let held = try await http("POST", port: port, body: Data(#"{"text":"good night"}"#.utf8))
        #expect(held.status == 202 && (held.json as? [String: Any])?["held"] as? String == "quiet hours", "\(String(describing: held.json))")
        let status = try #require(try await http("GET", port: port, path: "/status").json as? [String: Any])
        #expect((status["quiet"] as? [String: Any])?["active"] as? Bool == true)
        let waiting = status["waiting"] as? [[String: Any]]
        #expect(waiting?.count == 1 && waiting?.first?["reason"] as? String == "quiet hours", "\(status)")

        let forced = try await http("POST", port: port, body: Data(#"{"text":"doorbell","forced":true}"#.utf8))
        #expect(forced.status == 201)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2] == "       DOORBELL       " }, "\(flapd.stdout)")
        let after = try #require(try await http("GET", port: port, path: "/status").json as? [String: Any])
        let flips = try #require(((after["boards"] as? [[String: Any]])?.first?["flips"]) as? [[Int]])
        #expect(flips.count == 6 && flips.allSatisfy { $0.count == 22 })
        // D of DOORBELL at row 2, column 7: blank → D is four flips on the extended drum.
        #expect(flips[2][7] == 4 && flips[0].allSatisfy { $0 == 0 }, "\(flips)")
        let metrics = try await metricsText(port: port)
        #expect(metrics.contains("flapd_module_flips_total{board=\"wall\",row=\"2\",col=\"7\"} 4"))
        #expect(metrics.contains("flapd_quiet_hours 1") && metrics.contains("flapd_messages_waiting 0"))
    }

    func metricsText(port: Int) async throws -> String {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        return String(decoding: data, as: UTF8.self)
    }
}
