#if canImport(Glibc)
import Glibc
#endif
import FlapClock
import Foundation

/// Each module's place on its drum — steps from flap 0's edge — as the lines last moved it, in a
/// memory-mapped file the step thread stores into after every write (no system call, no
/// allocation): a process killed at any instant leaves every module's position exact to the
/// step, a flip caught half-way included. (The kernel keeps the mapped pages after a kill;
/// against a power cut, `flush` writes them.) A coil-driven module's place in its coil sequence
/// is kept too: the rotor stands at the last pattern energised, so a restart must go on from it.
/// Layout: "FLAPSTP2", steps per revolution and module count (u32 each, native order), one u32
/// a module (its place, or 0xFFFFFFFF unknown), then one byte a module (its coil phase).
public final class StepJournal: @unchecked Sendable {
    private static let magic = Array("FLAPSTP2".utf8)
    private static let unknown = UInt32.max
    private let file: MappedFile
    private let modules: Int
    /// What the file held for this board when opened (nil: unknown module); nil when it held
    /// nothing for a board of this size and drum.
    public let restored: [Int?]?
    /// Each module's coil phase when opened (0 for a new journal).
    public let restoredPhases: [Int]

    /// Opens (or creates) the journal of a board; nil when it cannot be mapped.
    public init?(path: String, modules: Int, stepsPerRevolution: Int) {
        guard let file = MappedFile(path: path, length: Self.magic.count + 8 + 5 * modules) else { return nil }
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
            restoredPhases = (0..<modules).map { m in Int(p.load(fromByteOffset: header + 8 + 4 * modules + m, as: UInt8.self)) }
        } else {
            restored = nil
            restoredPhases = Array(repeating: 0, count: modules)
            memset(p, 0xFF, file.length - modules)
            memset(p + file.length - modules, 0, modules)
            file.write(atStart: Self.magic)
            p.storeBytes(of: UInt32(stepsPerRevolution), toByteOffset: header, as: UInt32.self)
            p.storeBytes(of: UInt32(modules), toByteOffset: header + 4, as: UInt32.self)
        }
    }

    /// Stores a module's place (nil: unknown, as during a homing turn) and coil phase.
    func set(_ module: Int, _ place: Int?, phase: Int = 0) {
        guard module < modules else { return }
        let places = Self.magic.count + 8
        file.base.storeBytes(of: place.map { UInt32($0) } ?? Self.unknown, toByteOffset: places + 4 * module, as: UInt32.self)
        file.base.storeBytes(of: UInt8(truncatingIfNeeded: phase), toByteOffset: places + 4 * modules + module, as: UInt8.self)
    }

    /// Writes the mapped pages to disk (not on the real-time path).
    public func flush() { file.flush() }
}
