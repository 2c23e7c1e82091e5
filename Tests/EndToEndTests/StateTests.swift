import Foundation
import Testing

/// The board state survives a kill: a physical board cannot be asked where its flaps are.
@Suite struct StateTests {
    func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flap-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The saved positions of the first board, if the state file has them.
    func savedPositions(_ dir: String) -> [Int]? {
        guard let data = FileManager.default.contents(atPath: dir + "/boards.json"),
              let doc = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let boards = doc["boards"] as? [[String: Any]] else { return nil }
        return boards.first?["positions"] as? [Int]
    }

    /// Waits until the saved positions satisfy `condition` (polled; bounded only against a hang).
    func waitForSaved(_ dir: String, _ condition: ([Int]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let p = savedPositions(dir), condition(p) { return true }
            usleep(20_000)
        }
        return false
    }

    func post(_ body: String, port: Int) async throws -> [String: Any] {
        let answer = try await http("POST", port: port, body: Data(body.utf8))
        #expect(answer.status == 201)
        return answer.json as? [String: Any] ?? [:]
    }

    @Test func aKilledBoardComesBackAsItWas() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        let port = try #require(first.apiPort())
        _ = try await post(#"{"text":"persist me"}"#, port: port)
        #expect(first.waitUntil { o, _ in frames(in: o).last?[2] == "      PERSIST ME      " })
        // Saved as the transition completed (P is code 16, at row 2, column 6).
        #expect(waitForSaved(dir) { $0[2 * 22 + 6] == 16 })
        kill(first.pid, SIGKILL)
        _ = first.waitForExit()

        let second = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        let port2 = try #require(second.apiPort())
        let got = try await http("GET", port: port2)
        #expect(((got.json as? [String: Any])?["message"] as? [[Int]])?[2].contains(16) == true, "the target came back")
        // The flaps came back too: the same message moves nothing.
        #expect(try await post(#"{"text":"persist me"}"#, port: port2)["flips"] as? Int == 0)
        second.terminate()
        #expect(second.waitForExit() == 0)
    }

    @Test func aBoardKilledMidTransitionResumesFromWhereItWas() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        let port = try #require(first.apiPort())
        // '+' is the last of 40 flaps: 39 flips on every module, about 5.3 s.
        let plus = Array(repeating: Array(repeating: 46, count: 22), count: 6)
        let all = try #require(try await post(String(decoding: try JSONSerialization.data(withJSONObject: ["characters": plus]), as: UTF8.self), port: port)["flips"] as? Int)
        #expect(all == 39 * 132)
        // Kill once the state file shows flaps on their way (it is saved every second while moving).
        #expect(waitForSaved(dir) { $0.contains { $0 != 0 } })
        kill(first.pid, SIGKILL)
        _ = first.waitForExit()

        let trace = dir + "/trace.jsonl"
        let second = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir, "--trace", trace])
        // It resumes on its own and settles on the target, with fewer flips than from blank.
        #expect(second.waitUntil { o, _ in frames(in: o).last?.allSatisfy { $0 == String(repeating: "+", count: 22) } == true },
                "\(second.stdout)")
        second.terminate()
        #expect(second.waitForExit() == 0)
        let flips = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").count
        #expect(flips > 0 && flips < all, "resumed with \(flips) of \(all) flips")
    }
}

extension StateTests {
    @Test func sigtermLetsFlipsInProgressFinishAndSavesWhereTheyEnded() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = dir + "/trace.jsonl"
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir, "--trace", trace])
        let port = try #require(flapd.apiPort())
        let plus = Array(repeating: Array(repeating: 46, count: 22), count: 6)
        _ = try await post(String(decoding: try JSONSerialization.data(withJSONObject: ["characters": plus]), as: UTF8.self), port: port)
        #expect(waitForSaved(dir) { $0.contains { $0 != 0 } }, "moving")
        flapd.terminate()
        #expect(flapd.waitForExit() == 0)
        let line = flapd.stderr.split(separator: "\n").first { $0.contains("flips in progress finish first") }
        let count = line.flatMap { $0.split(separator: " ").compactMap { Int($0) }.first } ?? 0
        #expect((1...132).contains(count), "\(flapd.stderr)")
        // What was saved is where the last fired flip of every module left it.
        var last = [Int: String]()
        for l in try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n") {
            let e = try #require(try JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any])
            last[(e["row"] as! Int) * 22 + (e["col"] as! Int)] = e["glyph"] as? String
        }
        let saved = try #require(savedPositions(dir))
        let letters = " ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        for (m, code) in saved.enumerated() {
            let glyph: String = switch code {
            case 0...26: String(letters[letters.index(letters.startIndex, offsetBy: code)])
            case 27...35: String(code - 26)
            case 36: "0"
            case 37: "!"
            case 60: "?"
            case 46: "+"
            default: "{\(code)}"
            }
            #expect(glyph == (last[m] ?? " "), "module \(m): saved \(code), last flip showed \(last[m] ?? "nothing")")
        }
        #expect(saved.contains { $0 != 46 }, "stopped before the end")
    }
}

extension StateTests {
    @Test func anUnwritableStateFolderIsAnErrorNotADeadBoard() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A folder that cannot be made: its parent is a file.
        try "not a folder".write(toFile: dir + "/file", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir + "/file/state"])
        let port = try #require(flapd.apiPort())
        _ = try await post(#"{"text":"still flips"}"#, port: port)
        #expect(flapd.waitUntil { o, _ in frames(in: o).last?[2].contains("STILL FLIPS") == true })
        #expect(flapd.waitUntil { _, e in e.contains("board state not saved, the previous state is kept") }, "\(flapd.stderr)")
        flapd.terminate()
        #expect(flapd.waitForExit() == 0)
        #expect(flapd.stderr.components(separatedBy: "board state not saved").count == 2, "logged once, not per save")
    }
}
