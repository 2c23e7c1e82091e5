@testable import FlapConfig
import FlapYAML
import Foundation
import Testing
@testable import FlapDaemon

/// Issue 18: configs made to hurt. Each is refused with the limit it broke and its line, at
/// once (an alias bomb used to take exponential time in the YAML library's duplicate-key check).
@Suite struct ConfigHostileTests {
    /// `levels` anchors, each a list of ten aliases of the one before, the last used as a key.
    func aliasBomb(levels: Int, asKey: Bool) -> String {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for l in 1..<levels {
            yaml += "a\(l): &a\(l) [" + Array(repeating: "*a\(l - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        yaml += asKey ? "? *a\(levels - 1)\n: boom\n? *a\(levels - 1)\n: again\n" : "boom: *a\(levels - 1)\n"
        return yaml
    }

    @Test func anAliasBombIsRefusedByItsExpansion() {
        #expect(issues(aliasBomb(levels: 9, asKey: true)) == ["config: aliases expand to more than 100000 nodes (line 5)"])
        #expect(issues(aliasBomb(levels: 9, asKey: false)) == ["config: aliases expand to more than 100000 nodes (line 5)"])
    }

    @Test func aFewAliasesStillWork() throws {
        let c = try ConfigLoader.parse("""
            timing: &t { flip_ms: 100 }
            boards:
              - { id: a, timing: *t }
              - { id: b, timing: *t }
            """)
        #expect(c.boards.map(\.timing.flip) == [100_000_000, 100_000_000])
    }

    @Test func deepNestingIsRefused() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(issues("x: " + deep) == ["config: nested deeper than 32 levels (line 1)"])
    }

    @Test func bytesThatAreNotUTF8AreNamedWithTheirLine() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("flapd-\(UUID()).yaml")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("timing:\n  flip_ms: 1\u{E9}0\n".utf8.map { $0 } .replacingUTF8E9()).write(to: file)
        do {
            _ = try ConfigLoader.load(file: file.path, environment: [:])
            Issue.record("accepted")
        } catch {
            #expect(error.issues.map(\.description) == ["config: not UTF-8: byte 0xE9 at column 13 (line 2)"])
        }
    }

    @Test func aFileOverTheSizeLimitIsRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("flapd-\(UUID()).yaml")
        defer { try? FileManager.default.removeItem(at: file) }
        // Ten-byte lines past the limit: it passes it 6 bytes into line 104,858 (issue 39: the
        // error named the limit but not where).
        try Data(String(repeating: "# comment\n", count: YAMLBudget.maxBytes / 10 + 2).utf8).write(to: file)
        do {
            _ = try ConfigLoader.load(file: file.path, environment: [:])
            Issue.record("accepted")
        } catch {
            #expect(error.issues.map(\.description) == ["config: the file is larger than 1024 KiB (1048576 bytes): it passes the limit at column 7 (line 104858)"])
        }
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(String(repeating: "# comment\n", count: YAMLBudget.maxBytes / 10 + 2)) }
    }
}

private extension Array where Element == UInt8 {
    /// The UTF-8 of 'é' (C3 A9) as Latin-1's single byte E9.
    func replacingUTF8E9() -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < count {
            if self[i] == 0xC3, i + 1 < count, self[i + 1] == 0xA9 { out.append(0xE9); i += 2 } else { out.append(self[i]); i += 1 }
        }
        return out
    }
}
