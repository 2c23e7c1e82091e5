#if canImport(Glibc)
import Glibc
#endif
import FlapClock
import Foundation

/// Each module's place on its drum — steps from flap 0's edge — as the lines last moved it, in a
/// memory-mapped file the step thread stores into around every write (no system call, no
/// allocation): before the write that steps a module, its new place marked *in flight*; after
/// it, the place alone. A process killed at any instant leaves every module's place known, a
/// flip caught half-way included — exactly, or, for a module caught between the two stores,
/// as in flight: at the place or one step short of it, which no store can tell apart (the kill
/// may land just before or just after the write). The restart homes such a module where it has
/// a home sensor (`homeUncertain`), and otherwise takes the step as made: one step of a turn
/// (a fraction of a flap, never a wrong one) at most. (The kernel keeps the mapped pages after a
/// kill; against a power cut, `flush` writes them.) A coil-driven module's place in its coil
/// sequence is kept too: the rotor stands at the last pattern energised, so a restart must go
/// on from it. Layout: "FLAPSTP2", steps per revolution and module count (u32 each, native
/// order), one u32 a module (its place, its top bit set while in flight, or 0xFFFFFFFF
/// unknown), then one byte a module (its coil phase).
/// (`@unchecked Sendable`: after `init` only the board's step thread stores into it; what was
/// restored is read at `init`.)
public final class StepJournal: @unchecked Sendable {
    private static let magic = Array("FLAPSTP2".utf8)
    private static let unknown = UInt32.max
    private static let inFlightBit: UInt32 = 1 << 31
    private let file: MappedFile
    private let modules: Int
    /// What the file held for this board when opened (nil: unknown module); nil when it held
    /// nothing for a board of this size and drum.
    public let restored: [Int?]?
    /// Each module's coil phase when opened (0 for a new journal).
    public let restoredPhases: [Int]
    /// The modules the file held in flight when opened: at their `restored` place or one step
    /// short of it.
    public let restoredInFlight: Set<Int>

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
            let values = (0..<modules).map { m in p.load(fromByteOffset: header + 8 + 4 * m, as: UInt32.self) }
            restored = values.map { v in
                let place = v == Self.unknown ? v : v & ~Self.inFlightBit
                return place >= UInt32(stepsPerRevolution) ? nil : Int(place)
            }
            restoredInFlight = Set(values.indices.filter { values[$0] != Self.unknown && values[$0] & Self.inFlightBit != 0 })
            restoredPhases = (0..<modules).map { m in Int(p.load(fromByteOffset: header + 8 + 4 * modules + m, as: UInt8.self)) }
        } else {
            restored = nil
            restoredInFlight = []
            restoredPhases = Array(repeating: 0, count: modules)
            memset(p, 0xFF, file.length - modules)
            memset(p + file.length - modules, 0, modules)
            file.write(atStart: Self.magic)
            p.storeBytes(of: UInt32(stepsPerRevolution), toByteOffset: header, as: UInt32.self)
            p.storeBytes(of: UInt32(modules), toByteOffset: header + 4, as: UInt32.self)
        }
    }

    /// Stores a module's place (nil: unknown, as during a homing turn) and coil phase; `inFlight`
    /// just before the write that steps it there.
    func set(_ module: Int, _ place: Int?, phase: Int = 0, inFlight: Bool = false) {
        guard module < modules else { return }
        let places = Self.magic.count + 8
        let value = place.map { UInt32($0) | (inFlight ? Self.inFlightBit : 0) } ?? Self.unknown
        file.base.storeBytes(of: value, toByteOffset: places + 4 * module, as: UInt32.self)
        file.base.storeBytes(of: UInt8(truncatingIfNeeded: phase), toByteOffset: places + 4 * modules + module, as: UInt8.self)
    }

    /// Writes the mapped pages to disk (not on the real-time path).
    public func flush() { file.flush() }
}
