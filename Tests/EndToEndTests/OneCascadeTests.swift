import EndToEndSupport
import FlapSerialTesting
import Foundation
import Testing
import TestWaits

/// Issue 38, item 4, end to end: a grid's message plays as one board — the cascade runs on from
/// the left board into the right, from one instant, as the timing formula says for the grid's
/// own row and column; the trace and each board's outputs follow it.
@Suite struct OneCascadeTests {
    /// Each flip of a trace: board, row, column, flip, planned (ms from its transition's start),
    /// and its transition's start (µs, monotonic: the actual instant less the actual offset).
    struct Flip { var board: String; var row: Int; var col: Int; var flip: Int; var plannedMs: Double; var startMicros: Double }

    func flips(_ path: String) throws -> [Flip] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let board = o["board"] as? String, let row = o["row"] as? Int, let col = o["col"] as? Int, let flip = o["flip"] as? Int,
                  let planned = o["planned_ms"] as? Double, let actual = o["actual_ms"] as? Double, let ns = o["actual_ns"] as? Double else { return nil }
            return Flip(board: board, row: row, col: col, flip: flip, plannedMs: planned, startMicros: ns / 1000 - actual * 1000)
        }
    }

    @Test(.timeLimit(.minutes(5))) func twoVirtualNotesPlayOneCascade() async throws {
        let dir = try scratchDirectory("flap-grid")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            boards:
              - { id: left, model: note, timing: { flip_ms: 50, column_stagger_ms: 10, row_stagger_ms: 30 } }
              - { id: right, model: note, timing: { flip_ms: 50, column_stagger_ms: 10, row_stagger_ms: 30 } }
            grids: [{ id: pair, boards: [[left, right]] }]
            local_api: { port: 0, board: pair }
            """.write(toFile: dir + "/notes.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/notes.yaml", "--plain", "--no-sound", "--trace", dir + "/t.jsonl"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        // Every module to A: one flip each, so each module's first flip is its start.
        let all = Array(repeating: Array(repeating: 1, count: 30), count: 3)
        #expect(try await http("POST", port: port, body: try JSONSerialization.data(withJSONObject: all)).status == 201)
        let trace = dir + "/t.jsonl"
        #expect(await eventually { ((try? flips(trace)) ?? []).count == 90 }, "\(flapd.stderr)")
        let seen = try flips(trace)
        let first = Dictionary(uniqueKeysWithValues: seen.map { ("\($0.board) \($0.row) \($0.col)", $0) })
        let origin = try #require(first["left 0 0"])
        for board in ["left", "right"] {
            for r in 0..<3 {
                for c in 0..<15 {
                    let f = try #require(first["\(board) \(r) \(c)"])
                    // The grid's column: the right Note's column 0 is the grid's 15.
                    let gridCol = (board == "right" ? 15 : 0) + c
                    #expect(abs(f.plannedMs - origin.plannedMs - Double(gridCol * 10 + r * 30)) < 0.002, "\(board) \(r) \(c): \(f.plannedMs) ms")
                    #expect(abs(f.startMicros - origin.startMicros) < 3, "one start for both Notes: \(board) \(f.startMicros) vs \(origin.startMicros)")
                }
            }
        }
    }

    /// Three boards in a row on three outputs — the virtual board, and two flapbus controllers on
    /// their own serial lines: each controller's MOVEs carry the instants of the one cascade.
    @Test(.timeLimit(.minutes(5))) func aGridOnDifferentOutputsFollowsOneCascade() async throws {
        let east = try ScriptedController(modules: 4), west = try ScriptedController(modules: 4)
        defer { east.stop(); west.stop() }
        let timing = "timing: { flip_ms: 80, column_stagger_ms: 100, row_stagger_ms: 0 }"
        let dir = try scratchDirectory("flap-grid")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            local_api: { port: 0, board: row }
            sound: { enabled: false }
            boards:
              - { id: a, rows: 1, cols: 4, \(timing) }
              - { id: b, rows: 1, cols: 4, output: flapbus, serial: { port: \(east.devicePath), baud: 115200 }, \(timing) }
              - { id: c, rows: 1, cols: 4, output: flapbus, serial: { port: \(west.devicePath), baud: 115200 }, \(timing) }
            grids: [{ id: row, boards: [[a, b, c]] }]
            """.write(toFile: dir + "/row.yaml", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["run", "--config", dir + "/row.yaml", "--plain", "--no-sound", "--trace", dir + "/t.jsonl"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        #expect(await eventually { east.moveFrames.count >= 1 && west.moveFrames.count >= 1 }, "the start's MOVE\n\(flapd.stderr)")
        #expect(try await http("POST", port: port, body: Data("[[1,2,3,4,5,6,7,8,9,10,11,12]]".utf8)).status == 201)
        #expect(await eventually { east.moveFrames.dropFirst().joined().count == 4 && west.moveFrames.dropFirst().joined().count == 4 },
                "\(east.moveFrames)\n\(west.moveFrames)")
        let b = Array(east.moveFrames.dropFirst().joined()).sorted { $0.module < $1.module }
        let c = Array(west.moveFrames.dropFirst().joined()).sorted { $0.module < $1.module }
        #expect(b.map(\.flap) == [5, 6, 7, 8] && c.map(\.flap) == [9, 10, 11, 12], "E…H and I…L")
        // One t0 for the row: board b's column k is the grid's 4 + k, c's the grid's 8 + k.
        let t0 = Set(b.enumerated().map { k, m in Int64(m.startMicros) - Int64(4 + k) * 100_000 }
                     + c.enumerated().map { k, m in Int64(m.startMicros) - Int64(8 + k) * 100_000 })
        #expect(t0.count == 1, "\(b)\n\(c)")
        // The virtual board's flips (the trace, each at its 90° point: 40 ms in) start on the same
        // t0, from the grid's column 0.
        let trace = dir + "/t.jsonl"
        #expect(await eventually {
            let seen = (try? flips(trace)) ?? []
            return seen.filter { $0.board == "a" && $0.flip == 0 }.count == 4 && seen.contains { $0.board == "c" }
        }, "\(flapd.stderr)")
        let a = try flips(trace).filter { $0.board == "a" && $0.flip == 0 }.sorted { $0.col < $1.col }
        #expect(a.map(\.col) == [0, 1, 2, 3], "\(a)")
        for f in a {
            let planned = f.startMicros + f.plannedMs * 1000
            #expect(abs(planned - Double(t0.first ?? 0) - Double(f.col) * 100_000 - 40_000) < 3, "a \(f.col): \(planned) µs")
        }
    }
}
