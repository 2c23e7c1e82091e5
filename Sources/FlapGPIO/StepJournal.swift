#if canImport(Glibc)
import Glibc
#endif
import FlapTiming
import Foundation

/// Each module's place on its drum — steps from flap 0's edge — as the lines last moved it, in a
/// memory-mapped file the step thread stores into after every write (no system call, no
/// allocation): a process killed at any instant leaves every module's position exact to the
/// step, a flip caught half-way included. (The kernel keeps the mapped pages after a kill;
/// against a power cut, `flush` writes them.) Layout: "FLAPSTP1", steps per revolution and module
/// count (u32 each, native order), then one u32 a module: its place, or 0xFFFFFFFF unknown.
public final class StepJournal: @unchecked Sendable {
    private static let magic = Array("FLAPSTP1".utf8)
    private static let unknown = UInt32.max
    private let file: MappedFile
    private let modules: Int
    /// What the file held for this board when opened (nil: unknown module); nil when it held
    /// nothing for a board of this size and drum.
    public let restored: [Int?]?

    /// Opens (or creates) the journal of a board; nil when it cannot be mapped.
    public init?(path: String, modules: Int, stepsPerRevolution: Int) {
        guard let file = MappedFile(path: path, length: Self.magic.count + 8 + 4 * modules) else { return nil }
        self.file = file
        self.modules = modules
        let p = file.base, header = Self.magic.count
        let matches = !file.wasResized && file.begins(with: Self.magic)
            && p.load(fromByteOffset: header, as: UInt32.self) == UInt32(stepsPerRevolution)
            && p.load(fromByteOffset: header + 4, as: UInt32.self) == UInt32(modules)
        if matches {
            restored = (0..<modules).map { m in
                let v = p.load(fromByteOffset: header + 8 + 4 * m, as: UInt32.self)
                return v == Self.unknown || v >= UInt32(stepsPerRevolution) ? nil : Int(v)
            }
        } else {
            restored = nil
            memset(p, 0xFF, file.length)
            file.write(atStart: Self.magic)
            p.storeBytes(of: UInt32(stepsPerRevolution), toByteOffset: header, as: UInt32.self)
            p.storeBytes(of: UInt32(modules), toByteOffset: header + 4, as: UInt32.self)
        }
    }

    /// Stores a module's place (nil: unknown, as during a homing turn).
    func set(_ module: Int, _ place: Int?) {
        guard module < modules else { return }
        file.base.storeBytes(of: place.map { UInt32($0) } ?? Self.unknown, toByteOffset: Self.magic.count + 8 + 4 * module, as: UInt32.self)
    }

    /// Writes the mapped pages to disk (not on the real-time path).
    public func flush() { file.flush() }
}
