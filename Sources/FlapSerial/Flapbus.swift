/// flapbus, the project's own module protocol (specified in `hardware/flapbus.md`): frames
/// `COBS(header ‖ payload ‖ CRC32-LE(header ‖ payload)) 0x00`, header = version, type, nonce
/// (u16 LE). Multi-byte numbers are little-endian. Every host frame is acknowledged by nonce.
public enum Flapbus {
    public static let version: UInt8 = 1

    /// Frame types. Host → controller below 0x80, controller → host from 0x80.
    public enum FrameType: UInt8, Sendable {
        case hello = 0x01, sync = 0x02, move = 0x10, show = 0x11, home = 0x12, status = 0x13
        case ack = 0x80, info = 0x81, statusReport = 0x93
    }

    /// An acknowledgement's result.
    public enum Result: UInt8, Sendable {
        case ok = 0, badFrame = 1, unknownType = 2, badModule = 3, busy = 4, badVersion = 5
    }

    /// One module's move: to `flap`, its first flip starting at `start` (µs, host time base,
    /// as set by SYNC), each flip taking `flipMs`.
    public struct Move: Equatable, Sendable {
        public var module: UInt16
        public var flap: UInt8
        public var startMicros: UInt64
        public var flipMs: UInt16
        public init(module: UInt16, flap: UInt8, startMicros: UInt64, flipMs: UInt16) {
            self.module = module; self.flap = flap; self.startMicros = startMicros; self.flipMs = flipMs
        }
    }

    /// An LED module's glyph (a Vestaboard code), shown at `atMicros`.
    public struct Show: Equatable, Sendable {
        public var module: UInt16
        public var code: UInt8
        public var atMicros: UInt64
        public init(module: UInt16, code: UInt8, atMicros: UInt64) { self.module = module; self.code = code; self.atMicros = atMicros }
    }

    public static func hello(nonce: UInt16) -> [UInt8] { frame(.hello, nonce: nonce, []) }

    public static func sync(nonce: UInt16, hostMicros: UInt64) -> [UInt8] { frame(.sync, nonce: nonce, le(hostMicros, 8)) }

    public static func move(nonce: UInt16, _ moves: [Move]) -> [UInt8] {
        precondition(moves.count <= 255)
        var p: [UInt8] = [UInt8(moves.count)]
        for m in moves { p += le(UInt64(m.module), 2) + [m.flap] + le(m.startMicros, 8) + le(UInt64(m.flipMs), 2) }
        return frame(.move, nonce: nonce, p)
    }

    public static func show(nonce: UInt16, _ shows: [Show]) -> [UInt8] {
        precondition(shows.count <= 255)
        var p: [UInt8] = [UInt8(shows.count)]
        for s in shows { p += le(UInt64(s.module), 2) + [s.code] + le(s.atMicros, 8) }
        return frame(.show, nonce: nonce, p)
    }

    /// Homes these modules (none listed: all).
    public static func home(nonce: UInt16, modules: [UInt16]) -> [UInt8] {
        frame(.home, nonce: nonce, [UInt8(modules.count)] + modules.flatMap { le(UInt64($0), 2) })
    }

    public static func status(nonce: UInt16) -> [UInt8] { frame(.status, nonce: nonce, []) }

    public static func frame(_ type: FrameType, nonce: UInt16, _ payload: [UInt8]) -> [UInt8] {
        let body = [version, type.rawValue] + le(UInt64(nonce), 2) + payload
        return COBS.encode(body + CRC32.littleEndian(body)) + [0]
    }

    static func le(_ value: UInt64, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }

    /// What a controller says.
    public enum Reply: Equatable, Sendable {
        case ack(nonce: UInt16, result: Result)
        case info(nonce: UInt16, protocolVersion: UInt8, modules: Int, led: Bool, drum: [UInt8])
        case status(nonce: UInt16, modules: [ModuleStatus])
    }

    /// One module's health as its controller counts it.
    public struct ModuleStatus: Equatable, Sendable {
        public var state: UInt8, flap: UInt8, missedHome: UInt16, unexpectedHome: UInt16, crcErrors: UInt16
        /// Whether it turns (nil: the controller did not say — the `moving` bits are optional).
        public var moving: Bool? = nil
    }

    /// Reads one controller frame (its bytes between delimiters).
    public static func decode(_ stuffed: [UInt8]) throws(SerialFrameError) -> Reply {
        let body = try SplitflapProtocol.unframe(stuffed)
        guard body.count >= 4 else { throw .malformed("\(body.count)-byte body, shorter than a header") }
        guard body[0] == version else { throw .malformed("flapbus version \(body[0]), this host speaks \(version)") }
        let nonce = UInt16(body[2]) | UInt16(body[3]) << 8
        let p = Array(body[4...])
        func u16(_ i: Int) -> UInt16 { UInt16(p[i]) | UInt16(p[i + 1]) << 8 }
        switch FrameType(rawValue: body[1]) {
        case .ack?:
            guard p.count >= 1 else { throw .malformed("ACK without a result") }
            return .ack(nonce: nonce, result: Result(rawValue: p[0]) ?? .badFrame)
        case .info?:
            guard p.count >= 5, p.count >= 5 + Int(p[4]) else { throw .malformed("INFO shorter than its drum") }
            return .info(nonce: nonce, protocolVersion: p[0], modules: Int(u16(1)), led: p[3] == 1, drum: Array(p[5..<(5 + Int(p[4]))]))
        case .statusReport?:
            guard p.count >= 2, p.count >= 2 + Int(u16(0)) * 8 else { throw .malformed("STATUS shorter than its modules") }
            let count = Int(u16(0)), bits = 2 + count * 8
            let hasMoving = p.count >= bits + (count + 7) / 8
            let modules = (0..<count).map { i in
                let o = 2 + i * 8
                return ModuleStatus(state: p[o], flap: p[o + 1], missedHome: u16(o + 2), unexpectedHome: u16(o + 4), crcErrors: u16(o + 6),
                                    moving: hasMoving ? p[bits + i / 8] & (1 << UInt8(i % 8)) != 0 : nil)
            }
            return .status(nonce: nonce, modules: modules)
        default:
            throw .malformed("frame type 0x\(String(body[1], radix: 16)) is not one a controller sends")
        }
    }
}
