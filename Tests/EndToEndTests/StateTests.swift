import EndToEndSupport
import Foundation
import Testing
import TestWaits

/// The board state survives a kill: a physical board cannot be asked where its flaps are.
@Suite struct StateTests {
    /// The saved positions of the first board, if the state file has them.
    func savedPositions(_ dir: String) -> [Int]? {
        guard let data = FileManager.default.contents(atPath: dir + "/boards.json"),
              let doc = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let boards = doc["boards"] as? [[String: Any]] else { return nil }
        return boards.first?["positions"] as? [Int]
    }

    /// Waits until the saved positions satisfy `condition` (polled; bounded only against a hang).
    func waitForSaved(_ dir: String, _ condition: @escaping @Sendable ([Int]) -> Bool) async -> Bool {
        await eventually { savedPositions(dir).map(condition) ?? false }
    }

    /// Posts `body` (when given), waits until the saved positions satisfy `condition`, then
    /// `act` — all at once on one thread of its own (a kill or a stop that must come
    /// mid-transition: a test task resumed after an `await` can wait many seconds for a pool
    /// thread in a whole test run, and the transition, begun at the post, went on without it:
    /// in a full `swift test` the kill came after its 11 s, and the test saw no module moving).
    /// Whether the condition was seen, and the post's answer (its `flips`; nil for an answer not
    /// 201 — then nothing was waited for).
    func whenSaved(_ dir: String, posting body: String, port: Int, _ condition: @escaping @Sendable ([Int]) -> Bool,
                   then act: @escaping @Sendable () -> Void) async -> (saved: Bool, flips: Int?) {
        await offPool {
            let answer = blockingHTTP("POST", port: port, body: Data(body.utf8))
            guard answer.status == 201 else { return (false, nil) }
            let saved = poll { savedPositions(dir).map(condition) ?? false }
            act()
            return (saved, (answer.json as? [String: Any])?["flips"] as? Int ?? -1)
        }
    }

    func post(_ body: String, port: Int) async throws -> [String: Any] {
        let answer = try await http("POST", port: port, body: Data(body.utf8))
        #expect(answer.status == 201)
        return answer.json as? [String: Any] ?? [:]
    }

    @Test func aKilledBoardComesBackAsItWas() async throws {
        let dir = try scratchDirectory("flap-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        let port = try #require(await first.apiPort())
        _ = try await post(#"{"text":"persist me"}"#, port: port)
        #expect(await first.waitUntil { o, _ in frames(in: o).last?[2] == "      PERSIST ME      " })
        // Saved as the transition completed (P is code 16, at row 2, column 6).
        #expect(await waitForSaved(dir) { $0[2 * 22 + 6] == 16 })
        kill(first.pid, SIGKILL)
        _ = await first.waitForExit()

        let second = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        let port2 = try #require(await second.apiPort())
        let got = try await http("GET", port: port2)
        #expect(((got.json as? [String: Any])?["message"] as? [[Int]])?[2].contains(16) == true, "the target came back")
        // The flaps came back too: the same message moves nothing.
        #expect(try await post(#"{"text":"persist me"}"#, port: port2)["flips"] as? Int == 0)
        second.terminate()
        #expect(await second.waitForExit() == 0)
    }

    /// A config whose full-board change takes about 11 s (so a kill lands mid-transition even on
    /// a loaded machine): 200 ms per flip; steps of 130 ms per column and 70 ms per row put the
    /// modules at all phases of their flips, so some flip is always before its 90° point.
    func slowConfig(_ dir: String) throws -> String {
        let path = dir + "/slow.yaml"
        try "timing: { flip_ms: 200, column_stagger_ms: 130, row_stagger_ms: 70 }\nboards: [{ drum: standard }]\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aBoardKilledMidTransitionResumesFromWhereItWas() async throws {
        let dir = try scratchDirectory("flap-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try slowConfig(dir)
        let first = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--config", config, "--state-dir", dir])
        let port = try #require(await first.apiPort())
        // '+' is the last of 40 flaps: 39 flips on every module.
        let plus = Array(repeating: Array(repeating: 46, count: 22), count: 6)
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["characters": plus]), as: UTF8.self)
        // Kill once the state file shows flaps on their way (it is saved every second while moving).
        let pid = first.pid
        let killed = await whenSaved(dir, posting: body, port: port, { $0.contains { $0 != 0 } }, then: { kill(pid, SIGKILL) })
        #expect(killed.saved && killed.flips == 39 * 132, "\(killed)")
        _ = await first.waitForExit()
        let journal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/positions.bin"))).dropFirst(8).map(Int.init)
        #expect(journal.contains { $0 != 46 }, "killed mid-transition")

        let trace = dir + "/trace.jsonl"
        let second = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--config", config, "--state-dir", dir, "--trace", trace])
        let port2 = try #require(await second.apiPort())
        // The accepted message is still the target, and the board is on its way there again.
        let got = try await http("GET", port: port2)
        #expect((got.json as? [String: Any])?["message"] as? [[Int]] == Array(repeating: Array(repeating: 46, count: 22), count: 6))
        let traced: @Sendable () -> [Substring] = { ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "").split(separator: "\n") }
        _ = await eventually { traced().count >= 3 }
        let lines = traced()
        second.terminate()
        #expect(await second.waitForExit() == 0)
        // Every module's first flip after the restart leaves from where the journal had it.
        let drum = Array(" ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?+")
        let codes = [0] + Array(1...26) + [36] + Array(27...35) + [37, 60, 46]
        #expect(!lines.isEmpty)
        for l in lines {
            let e = try #require(try JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any])
            guard e["flip"] as? Int == 0 else { continue }
            let m = (e["row"] as! Int) * 22 + (e["col"] as! Int)
            let from = codes.firstIndex(of: journal[m])!
            #expect(e["glyph"] as? String == String(drum[(from + 1) % 40]), "module \(m)")
        }
    }
}

extension StateTests {
    @Test func sigtermLetsFlipsInProgressFinishAndSavesWhereTheyEnded() async throws {
        let dir = try scratchDirectory("flap-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = dir + "/trace.jsonl"
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir, "--trace", trace,
                                      "--config", try slowConfig(dir)])
        let port = try #require(await flapd.apiPort())
        let plus = Array(repeating: Array(repeating: 46, count: 22), count: 6)
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["characters": plus]), as: UTF8.self)
        let stopped = await whenSaved(dir, posting: body, port: port, { $0.contains { $0 != 0 } }, then: { flapd.terminate() })
        #expect(stopped.saved && stopped.flips != nil, "moving: \(stopped)")
        #expect(await flapd.waitForExit() == 0)
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
        let dir = try scratchDirectory("flap-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A folder that cannot be made: its parent is a file.
        try "not a folder".write(toFile: dir + "/file", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir + "/file/state"])
        let port = try #require(await flapd.apiPort())
        _ = try await post(#"{"text":"still flips"}"#, port: port)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2].contains("STILL FLIPS") == true })
        #expect(await flapd.waitUntil { _, e in e.contains("board state not saved, the previous state is kept") }, "\(flapd.stderr)")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
        #expect(flapd.stderr.components(separatedBy: "board state not saved").count == 2, "logged once, not per save")
    }
}

extension StateTests {
    /// Each file of the state folder nested 513 deep (Foundation's JSONDecoder traps on it: flapd
    /// died with SIGILL at every start, its board frozen, before `StateFile`): flapd starts, names
    /// each file and what is wrong with it, and flips the next message.
    @Test(arguments: ["boards.json", "inbox.json", "saved-boards.json"])
    func aStateFileTooDeepForTheDecoderIsAnErrorNotADeadBoard(file: String) async throws {
        let dir = try scratchDirectory("flap-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try String(repeating: "[", count: 513).write(toFile: dir + "/" + file, atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr.suffix(2000))")
        _ = try await post(#"{"text":"still flips"}"#, port: port)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2].contains("STILL FLIPS") == true })
        #expect(flapd.stderr.contains("\(dir)/\(file): not JSON within the limits: nested deeper than 64 levels"), "\(flapd.stderr.suffix(2000))")
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0)
    }
}

extension StateTests {
    /// An inbox kept with a held letter's unlock at 1e308 (a file flapd before `bounded` could
    /// write from a server's message, or a hand's edit): flapd died at its wait at every start.
    /// It starts, and flips the next message.
    @Test func aSavedUnlockNoBoardCanWaitForIsBounded() async throws {
        let dir = try scratchDirectory("flap-state")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let saved = #"{"displayed":[],"inbox":{"seen":{},"live":{},"beneath":{},"held":[{"id":"h","senderID":"alice","#
            + #""senderName":"alice","content":"far off","contentType":"text","sentAt":1796493912,"unlockAt":1e308}]}}"#
        try saved.write(toFile: dir + "/inbox.json", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--state-dir", dir])
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr.suffix(2000))")
        #expect(await flapd.waitForLog("held=1"), "\(flapd.stderr.suffix(2000))")
        _ = try await post(#"{"text":"still flips"}"#, port: port)
        #expect(await flapd.waitUntil { o, _ in frames(in: o).last?[2].contains("STILL FLIPS") == true })
        flapd.terminate()
        #expect(await flapd.waitForExit() == 0, "\(flapd.stderr.suffix(2000))")
    }
}
