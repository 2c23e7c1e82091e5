import FlapInput
import Foundation
import Testing

/// A file read from a door: never past its limit, whatever its size; what went wrong as data.
@Suite struct BoundedFileTests {
    func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "flap-bounded-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func aFileWithinItsLimitIsReadWhole() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/f"))
        #expect(try BoundedFile.read(dir + "/f", maxBytes: 200_000) == bytes, "exactly the limit")
        #expect(throws: BoundedFile.Problem.tooLarge(path: dir + "/f", maxBytes: 199_999)) { try BoundedFile.read(dir + "/f", maxBytes: 199_999) }
        try Data().write(to: URL(fileURLWithPath: dir + "/empty"))
        #expect(try BoundedFile.read(dir + "/empty", maxBytes: 0) == [])
    }

    /// A sparse file of 100 GiB takes no disk: reading it whole would ask for 100 GiB of memory.
    @Test func aHugeFileIsTooLargeNotAnAllocation() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/huge", contents: nil))
        #expect(truncate(dir + "/huge", 100 << 30) == 0)
        let problem = #expect(throws: BoundedFile.Problem.self) { try BoundedFile.read(dir + "/huge", maxBytes: 1 << 20) }
        #expect(problem == .tooLarge(path: dir + "/huge", maxBytes: 1 << 20))
        #expect(problem?.description == "\(dir)/huge: larger than 1048576 bytes")
    }

    @Test func aMissingFileAndAFolderSayWhichTheyAre() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: BoundedFile.Problem.missing(path: dir + "/none")) { try BoundedFile.read(dir + "/none", maxBytes: 10) }
        let problem = #expect(throws: BoundedFile.Problem.self) { try BoundedFile.read(dir, maxBytes: 10) }
        #expect(problem == .unreadable(path: dir, errno: EISDIR), "reading a folder fails with EISDIR, kept as data")
        #expect(problem?.reason.contains("errno \(EISDIR)") == true)
    }
}
