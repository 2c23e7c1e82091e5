import EndToEndSupport
import Foundation
import Testing

@Suite struct CommandTests {
    func temporaryFile(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("flapd-\(UUID().uuidString).yaml")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// Issue 38, item 5: `--version` names the release and the commit the tree was at when built.
    @Test func versionNamesTheReleaseAndTheCommit() async throws {
        let head = try FlapdProcess(["-C", QEMUGuest.repository.path, "rev-parse", "--short=12", "HEAD"], executable: "/usr/bin/git")
        #expect(await head.waitForExit() == 0)
        let commit = head.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for executable in [FlapdProcess.executable, HubHarness.executable] {
            let version = try FlapdProcess(["--version"], executable: executable)
            #expect(await version.waitForExit() == 0)
            let line = version.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(line == "0.1.0 (commit \(commit))" || line == "0.1.0 (commit \(commit)-dirty)", "\(executable): \(line)")
        }
    }

    /// Issue 15: `flapd plan --style` shows each style's instants (a table written out here).
    @Test func planShowsEveryStyle() async throws {
        let config = try temporaryFile("boards: [{ id: w, rows: 2, cols: 3, align: { horizontal: left, vertical: top } }]\n")
        defer { try? FileManager.default.removeItem(atPath: config) }
        func starts(_ options: [String]) async throws -> [[Double]] {
            let plan = try FlapdProcess(["plan", "--config", config, "--to", "AAA\nAAA"] + options)
            #expect(await plan.waitForExit() == 0, "\(plan.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
            var grid = [[Double]](repeating: [-1, -1, -1], count: 2)
            for m in json["modules"] as? [[String: Any]] ?? [] { grid[m["row"] as! Int][m["col"] as! Int] = (m["start_ms"] as! NSNumber).doubleValue }
            return grid
        }
        #expect(try await starts([]) == [[0, 20, 40], [50, 70, 90]])
        #expect(try await starts(["--style", "diagonal", "--step-interval-ms", "100"]) == [[0, 100, 200], [100, 200, 300]])
        #expect(try await starts(["--style", "curtain"]) == [[0, 40, 0], [0, 40, 0]])
        #expect(try await starts(["--style", "row", "--step-interval-ms", "7"]) == [[0, 0, 0], [7, 7, 7]])
        // Two at a time, 120 ms a flip: a column waits for the one before to land.
        #expect(try await starts(["--style", "wave", "--max-moving", "2", "--step-interval-ms", "1"]) == [[0, 120, 240], [0, 120, 240]])
        let bad = try FlapdProcess(["plan", "--config", config, "--to", "A", "--style", "spin"])
        #expect(await bad.waitForExit() == 1)
        #expect(bad.stderr.contains("--style: 'spin' is not a style (classic, curtain, drift, together, wave) or a strategy"), "\(bad.stderr)")
    }

    @Test func planPrintsTheDocumentedSchema() async throws {
        let config = try temporaryFile("boards:\n  - align: { horizontal: left, vertical: top }\n")
        let plan = try FlapdProcess(["plan", "--config", config, "--to", "   HELLO"])
        #expect(await plan.waitForExit() == 0, "\(plan.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        #expect(json["rows"] as? Int == 6 && json["cols"] as? Int == 22 && json["flip_ms"] as? Int == 120)
        let modules = try #require(json["modules"] as? [[String: Any]])
        #expect(modules.count == 5)
        // H at row 0, column 0 (spaces fold): 8 flips from 0 ms.
        let h = modules[0]
        #expect(h["row"] as? Int == 0 && h["col"] as? Int == 0 && h["from"] as? String == " " && h["to"] as? String == "H")
        #expect(h["flips"] as? Int == 8 && h["start_ms"] as? Int == 0 && h["end_ms"] as? Int == 960)
        #expect(h["clacks_ms"] as? [Int] == [60, 180, 300, 420, 540, 660, 780, 900])
        let o = modules[4]
        #expect(o["col"] as? Int == 4 && o["start_ms"] as? Int == 80 && o["flips"] as? Int == 15)
        #expect(json["duration_ms"] as? Int == 80 + 15 * 120)
    }

    @Test func checkConfigNamesTheProblem() async throws {
        let bad = try temporaryFile("boards:\n  - id: wall\n    timing:\n      flip_ms: 20\n")
        let check = try FlapdProcess(["check-config", bad])
        #expect(await check.waitForExit() == 1)
        #expect(check.stderr.contains("boards[0].timing.flip_ms: 20 is outside 50…200 (line 4)"), "\(check.stderr)")
        let good = try temporaryFile("boards:\n  - id: hall\n    drum: extended\n")
        let ok = try FlapdProcess(["check-config", good])
        #expect(await ok.waitForExit() == 0)
        #expect(ok.stdout.contains("hall 6×22 66 flaps virtual"))
        let missing = try FlapdProcess(["check-config", "/nonexistent.yaml"])
        #expect(await missing.waitForExit() == 1)
        #expect(missing.stderr.contains("cannot read the file"))
    }

    @Test func runRefusesABadConfigWithoutStarting() async throws {
        let bad = try temporaryFile("local_api: { port: -1 }\n")
        let run = try FlapdProcess(["run", "--config", bad, "--plain"])
        #expect(await run.waitForExit() == 1)
        #expect(run.stderr.contains("local_api.port: -1 is outside 0…65535 (line 1)"))
    }

    /// A GPIO board whose chip is not there: flapd says which chip and how to find the right one,
    /// and does not start (no local API, no half-wired board).
    @Test func runRefusesAGPIOBoardWithoutItsChip() async throws {
        let config = try configFile("""
            local_api: { port: 0 }
            boards:
              - { id: shelf, rows: 1, cols: 2, output: gpio, gpio: { chip: gpiochip77, kind: step_dir, step: [17, 27] } }
            """)
        let run = try FlapdProcess(["run", "--config", config, "--plain", "--no-sound"])
        #expect(await run.waitForExit() == 1)
        #expect(run.stderr.contains("board 'shelf': no GPIO chip gpiochip77 (/dev/gpiochip77 does not exist; `gpiodetect` lists the chips)"), "\(run.stderr)")
        #expect(!run.stderr.contains("local API listening"), "\(run.stderr)")
    }
}
