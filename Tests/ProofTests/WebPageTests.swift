import EndToEndSupport
import Foundation
import Testing

/// Issue 16, items 1 and 2: flapd's web page in a real browser — Debian's Chromium, headless,
/// driven by Selenium (PyPI) through Debian's chromedriver (`Tests/clients/web-check.py`) —
/// against a real flapd with a key: a wrong key is refused; the live board plays every flip of
/// a posted message in cascade order and ends on what `GET /local-api/message` returns; the
/// screenshot has letters where the board has them and dark modules elsewhere; compose previews
/// on the board's own size (the cut lines named) and sends; status shows the zone and its sender,
/// the lateness plot, and the quiet switch works from its buttons. Issue 39: a page made late (its
/// CPU throttled, messages every 0.3 s) ends on the last message, every module one glyph on both
/// halves; and the race of a settle overtaken by the next flip, played into the page, leaves C.
@Suite struct WebPageTests {
    /// The Python of the browser venv (Selenium), which `./setup --test` made.
    static func browserPython() async throws -> String {
        let venv = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/venv", "browser"], executable: "/bin/bash")
        try #require(await venv.waitForSlowExit() == 0, "the browser venv: \(venv.stderr)")
        return venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.timeLimit(.minutes(45))) func thePageShowsTheWallInARealBrowser() async throws {
        let dir = try scratchDirectory("flap-web")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let python = try await Self.browserPython()
        try "local_api: { port: 0, key: hallway-key }\n".write(toFile: dir + "/c.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/c.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        let check = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/web-check.py", "\(port)", "hallway-key", dir], executable: python)
        #expect(await check.waitForSlowExit() == 0, "\(check.stderr)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any], "\(check.stdout)\n\(check.stderr)")

        #expect((seen["wrong-key-problem"] as? String)?.hasPrefix("Invalid API key") == true, "\(seen)")
        #expect(seen["wrong-key-cells"] as? Int == 0, "no board without the key")
        #expect(seen["cells"] as? Int == 132 && seen["board-before"] as? Bool == true)
        #expect(seen["post"] as? Int == 201)
        #expect(seen["settled-matches"] as? Bool == true, "the page ends on GET /local-api/message")
        let posted = try #require(seen["flips-posted"] as? Int)
        #expect(posted > 100 && seen["flips-shown"] as? Int == posted, "every flip of the transition played: \(seen)")
        #expect(seen["cascade-order"] as? Bool == true && seen["first-flips-by-cascade"] as? Bool == true)
        #expect(seen["modules-moved"] as? Int == 19, "HELLO FROM THE HALLWAY: 19 letters")
        #expect(seen["letters-lit"] as? Int == 19 && seen["letters"] as? Int == 19, "every letter drawn where the board has it")
        #expect(seen["blanks-dark"] as? Int == 113 && seen["blanks"] as? Int == 113, "every blank module dark")
        #expect(seen["preview-matches"] as? Bool == true, "the preview is the local API's preview")
        let cut = try #require(seen["preview-cut"] as? [String])
        #expect(!cut.isEmpty && seen["preview-cut-shown"] as? [String] == cut.map { "Cut (does not fit): " + $0 })
        #expect(seen["send-status"] as? String == "201" && seen["sent-shows-preview"] as? Bool == true)
        #expect(seen["saved-listed"] as? [String] == ["hallway"] && seen["saved-restore-status"] as? String == "201", "\(seen)")
        #expect(seen["saved-restored"] as? Bool == true, "the saved board played back")
        #expect((seen["saved-after-delete"] as? [Any])?.isEmpty == true, "\(seen["saved-after-delete"] ?? "")")
        #expect(seen["late-settled"] as? Bool == true, "a late page ends on the last message: \(seen["settle-problems"] ?? "")")
        let race = try #require(seen["race"] as? [Any], "\(seen)")
        #expect(race.count == 3 && race[0] as? String == "C" && race[1] as? String == "C" && race[2] as? Int == 3,
                "a settle overtaken by the next flip leaves the module whole (it showed B over C before): \(race)")
        #expect((seen["late-mixed"] as? [Any])?.isEmpty == true, "a late page shows no module with two glyphs: \(seen["late-mixed"] ?? "")")
        let zone = try #require(seen["status-zone-sender"] as? [String])
        #expect(zone.prefix(4) == ["wall", "1–6", "1–22", "local"], "\(zone)")
        #expect(seen["histogram-bars"] as? Int == 12)
        let on = try #require(seen["quiet-after-on"] as? [String: Any])
        #expect(on["active"] as? Bool == true && on["switched"] as? Bool == true)
        #expect(seen["quiet-after-auto"] is NSNull, "no quiet hours configured: back to none")
        #expect(seen["display-header-hidden"] as? Bool == true)
        #expect((seen["board-colours"] as? Int ?? 0) > 16 && (seen["status-colours"] as? Int ?? 0) > 16, "screenshots are not blank")
        #expect(seen["console-errors"] as? [String] == [], "\(seen["console-errors"] ?? "")")
        for shot in ["board", "compose", "status", "display"] {
            #expect(FileManager.default.fileExists(atPath: "\(dir)/\(shot).png"))
        }
    }

    /// Issue 35, item 1: the calibration view in a real browser, by the keyboard alone, against a
    /// flapd whose 3 × 10 board is simulated drums (`chip: simulated`, homed at start): start,
    /// the arrows to module 0,1, three steps with +, A and Enter — the offset the steps imply
    /// (3 − A's edge 2 = 1) saved in calibration.json — n to the next module, a flap with f, end;
    /// then the self-test button (issue 35, item 4): 30 modules once round, all well.
    @Test(.timeLimit(.minutes(10))) func calibrationByTheKeyboardInARealBrowser() async throws {
        let dir = try scratchDirectory("flap-web-calibrate")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let python = try await Self.browserPython()
        let steps = (0..<30).map(String.init).joined(separator: ", "), sensors = (100..<130).map(String.init).joined(separator: ", ")
        try """
            local_api: { port: 0, key: hallway-key }
            state_dir: \(dir)
            boards:
              - id: wall
                rows: 3
                cols: 10
                output: gpio
                timing: { flip_ms: 60 }
                gpio: { chip: simulated, kind: step_dir, step: [\(steps)], steps_per_revolution: 80, home: { lines: [\(sensors)] } }
            """.write(toFile: dir + "/c.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["run", "--config", dir + "/c.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        let check = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/web-calibrate-check.py", "\(port)", "hallway-key", dir], executable: python)
        #expect(await check.waitForSlowExit() == 0, "\(check.stderr)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any], "\(check.stdout)\n\(check.stderr)")
        #expect(seen["cells"] as? Int == 30 && seen["started"] as? Bool == true && seen["picked"] as? String == "0,1", "\(seen)")
        let places = (seen["after-steps"] as? [String] ?? []).compactMap { $0.firstMatch(of: #/place (\d+) /#).map { Int($0.1)! } }
        #expect(places == [1, 2, 3], "three steps from the blank's edge: \(seen)")
        #expect(seen["showing"] as? String == "A" && (seen["after-mark"] as? String)?.contains("saved offset 1") == true, "\(seen)")
        #expect(try String(contentsOfFile: dir + "/calibration.json", encoding: .utf8).contains("1"), "the offset is in the file")
        #expect(seen["done"] as? [String] == ["0,1"] && seen["next"] as? String == "0,2")
        #expect((seen["after-flap"] as? String)?.contains("module 0,2, flap 1, place 2 ") == true, "\(seen)")
        #expect(seen["ended"] as? Bool == true && seen["key-asked"] as? Bool == false)
        #expect(seen["selftest"] as? String == "30 modules turned once round: 30 ok", "the self-test button: \(seen["selftest"] ?? "")")
        #expect(seen["sparklines"] as? Int == 30, "a line of magnet passes under every module (issue 35, item 3)")
        #expect((seen["magnet-title"] as? String)?.contains("magnet 0 steps at the last pass") == true, "\(seen["magnet-title"] ?? "")")
        #expect(seen["console-errors"] as? [String] == [], "\(seen["console-errors"] ?? "")")
        #expect(FileManager.default.fileExists(atPath: dir + "/calibrate.png"))
    }
}
