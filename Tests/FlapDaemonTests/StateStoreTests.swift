@testable import FlapBoard
import FlapConfig
import FlapNet
import Foundation
import Logging
import Testing
@testable import FlapDaemon

@Suite struct StateStoreTests {
    @Test func savesAtomicallyAndLoadsBack() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flap-store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(directory: dir)
        #expect(try store.load().isEmpty, "no state yet")
        let state = [StateStore.BoardState(id: "wall", rows: 1, cols: 2, positions: [1, 2], target: [3, 4])]
        try store.save(state)
        #expect(try store.load() == state)
        #expect(!FileManager.default.fileExists(atPath: dir + "/boards.json.tmp"), "no temporary file left behind")
    }

    @Test func aFailedSaveKeepsTheOldState() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flap-store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(directory: dir)
        let old = [StateStore.BoardState(id: "wall", rows: 1, cols: 1, positions: [1], target: [1])]
        try store.save(old)
        // A directory where the temporary file must go makes the write fail.
        try FileManager.default.createDirectory(atPath: dir + "/boards.json.tmp", withIntermediateDirectories: true)
        #expect(throws: StateError.self) {
            try store.save([StateStore.BoardState(id: "wall", rows: 1, cols: 1, positions: [2], target: [2])])
        }
        #expect(try store.load() == old)
    }
}

@Suite struct CalibrationTests {
    @Test func offsetsAreKeptPerBoardAndModule() throws {
        let dir = NSTemporaryDirectory() + "flap-cal-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try Calibration.load(dir).isEmpty)
        try Calibration.set(6, board: "wall", index: 2, modules: 4, in: dir)
        try Calibration.set(3, board: "wall", index: 0, modules: 4, in: dir)
        try Calibration.set(9, board: "hall", index: 0, modules: 1, in: dir)
        #expect(try Calibration.load(dir) == ["wall": [3, 0, 6, 0], "hall": [9]])
        try Data("[1, 2]".utf8).write(to: URL(fileURLWithPath: Calibration.path(dir)))
        #expect(throws: CalibrationError.self) { try Calibration.load(dir) }
    }
}

/// What flapd reads at start from its state folder, written by someone else: a file of any size
/// costs at most its limit, and one the decoders would trap on is an error naming it.
@Suite struct StateFolderLimitTests {
    func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "flap-limits-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/sources", withIntermediateDirectories: true)
        return dir
    }

    /// A sparse file of 100 GiB: no disk, but reading it whole asks for 100 GiB of memory.
    func huge(_ file: String) {
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        #expect(truncate(file, 100 << 30) == 0)
    }

    @Test func aHugeBoardStateIsAnErrorNamingIt() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        huge(dir + "/boards.json")
        let error = #expect(throws: StateError.self) { try StateStore(directory: dir).load() }
        #expect(error?.description == "\(dir)/boards.json: larger than 67108864 bytes")
    }

    @Test func calibrationOffsetsTooDeepOrTooLargeAreAnErrorNamingTheFile() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(repeating: UInt8(ascii: "["), count: 513).write(to: URL(fileURLWithPath: Calibration.path(dir)))
        let deep = #expect(throws: CalibrationError.self) { try Calibration.load(dir) }
        #expect(deep?.description.hasPrefix("\(dir)/calibration.json: not JSON within the limits: nested deeper than 8") == true, "\(deep.map { "\($0)" } ?? "")")
        try FileManager.default.removeItem(atPath: Calibration.path(dir))
        huge(Calibration.path(dir))
        let large = #expect(throws: CalibrationError.self) { try Calibration.load(dir) }
        #expect(large?.description == "\(dir)/calibration.json: larger than 4194304 bytes")
        try #"{"boards": {"wall": [1, 2]}}"#.write(toFile: Calibration.path(dir), atomically: true, encoding: .utf8)
        #expect(try Calibration.load(dir) == ["wall": [1, 2]])
    }

    /// A kept value is read no further than its source's `max_kib` (before, the whole file was
    /// asked for: 100 GiB failed to allocate and was dropped, a file of a few GiB was read whole).
    @Test func aSourcesKeptValueLargerThanItsSourceIsNotTaken() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try ConfigLoader.parse("""
            sources:
              - { id: small, json: "http://127.0.0.1:9/a.json" }
              - { id: big, json: "http://127.0.0.1:9/b.json", max_kib: 64 }
            """)
        try #"{"t": 4}"#.write(toFile: dir + "/sources/small", atomically: true, encoding: .utf8)
        huge(dir + "/sources/big")
        let sources = ScheduleSources(configs: config.sources, folder: dir + "/sources", logger: Logger(label: "test"))
        let now = Date().timeIntervalSince1970
        #expect(sources.areFresh(["small"], at: now), "a kept value within its limit is taken")
        #expect(!sources.areFresh(["big"], at: now), "a kept value of 100 GiB is not")
        #expect(throws: BoundedFetch.Problem.self) { try sources.take("big", file: dir + "/sources/big") }
    }
}
