@testable import FlapBoard
import Foundation
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
