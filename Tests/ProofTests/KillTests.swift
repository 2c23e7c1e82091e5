import EndToEndSupport
import Foundation
import Testing

/// SIGKILL at random instants, fifty times: every restart resumes from where each module was
/// (to within the flip in progress) and reaches the last accepted message.
@Suite struct KillTests {
    static let drum = Array(" ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?+")
    static let codes = [0] + Array(1...26) + [36] + Array(27...35) + [37, 60, 46]

    /// Drum indices from the position journal (after its 8-byte header).
    func journal(_ dir: String) throws -> [Int] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/positions.bin")))
        return bytes.dropFirst(8).map { code in Self.codes.firstIndex(of: Int(code))! }
    }

    @Test func fiftyKillsAtRandomInstants() async throws {
        let dir = try scratchDirectory("flap-kill")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/flapd.yaml"
        try """
            timing: { flip_ms: 50, column_stagger_ms: 5, row_stagger_ms: 10 }
            boards:
              - { rows: 2, cols: 6, drum: standard }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        var expected: [Int]? = nil   // positions the next start must resume from
        var target = 0               // drum index of the last accepted message
        var resumedFlips = 0
        for round in 0..<50 {
            let trace = dir + "/trace-\(round).jsonl"
            let flapd = try FlapdProcess(["demo", "--plain", "--no-sound", "--port", "0", "--config", config,
                                          "--state-dir", dir, "--trace", trace])
            let port = try #require(await flapd.apiPort(), "round \(round): \(flapd.stderr)")
            if let expected, expected != Array(repeating: target, count: 12) {
                // It resumes on its own and settles on the last accepted message.
                let row = String(repeating: Self.drum[target], count: 6)
                #expect(await flapd.waitUntil { o, _ in frames(in: o).last == [row, row] }, "round \(round): \(flapd.stdout)")
            }
            // Post the next message: three flaps further on every module.
            target = (target + 3) % Self.drum.count
            let line = String(repeating: Self.drum[target], count: 6)
            let body = try JSONSerialization.data(withJSONObject: ["text": line + "\n" + line])
            #expect(try await http("POST", port: port, body: body).status == 201)
            usleep(UInt32.random(in: 0...250_000))  // the random instant of the kill
            kill(flapd.pid, SIGKILL)
            _ = await flapd.waitForExit()
            if let expected {
                // The first flips after the restart left from the journal's positions.
                let lines = (try? String(contentsOfFile: trace, encoding: .utf8))?.split(separator: "\n") ?? []
                for l in lines {
                    guard let e = try? JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any],
                          e["transition"] as? Int == 1, e["flip"] as? Int == 0 else { continue }
                    let m = (e["row"] as! Int) * 6 + (e["col"] as! Int)
                    let glyph = Character(e["glyph"] as! String)
                    #expect(glyph == Self.drum[(expected[m] + 1) % Self.drum.count], "round \(round), module \(m)")
                    resumedFlips += 1
                }
            }
            expected = try journal(dir)
        }
        #expect(resumedFlips > 0, "some restarts had flips left to resume")
    }
}
