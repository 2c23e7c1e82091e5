import FlapWiring
/// The open splitflap display's serial protocol (scottbez1/splitflap): at 230 400 baud, frames
/// `COBS(protobuf ‖ CRC32-LE(protobuf)) 0x00`; one message in flight, acked by nonce, retried
/// every 250 ms. The host sends the desired flap of every module each time.
public enum SplitflapProtocol {
    public static let baud = SerialBus.splitflap.line.baud
    public static let retryMilliseconds = SerialBus.splitflap.retryMilliseconds
    /// One 0x00 switches a freshly booted display from its text mode to protobuf.
    public static let enterProtobufMode: [UInt8] = [0]
    /// The most modules a display takes: the firmware decodes a config of at most 255.
    public static let maxModules = SerialBus.splitflap.maxModules!

    /// What the host wants of one module.
    public struct ModuleTarget: Equatable, Sendable {
        public var flap: UInt8
        /// Changing it makes the module turn a full round to the same flap.
        public var movementNonce: UInt8 = 0
        public var resetNonce: UInt8 = 0
        public init(flap: UInt8, movementNonce: UInt8 = 0, resetNonce: UInt8 = 0) {
            self.flap = flap
            self.movementNonce = movementNonce
            self.resetNonce = resetNonce
        }
    }

    /// `ToSplitflap{nonce, splitflap_config{modules}}`, framed.
    public static func config(nonce: UInt32, modules: [ModuleTarget]) -> [UInt8] {
        var config = ProtobufWriter()
        for m in modules {
            var module = ProtobufWriter()
            module.field(1, UInt64(m.flap))
            module.field(2, UInt64(m.movementNonce))
            module.field(3, UInt64(m.resetNonce))
            config.field(1, message: module.bytes)
        }
        var message = ProtobufWriter()
        message.field(1, UInt64(nonce))
        message.field(3, message: config.bytes)
        return frame(message.bytes)
    }

    /// `ToSplitflap{nonce, request_state{}}`, framed.
    public static func requestState(nonce: UInt32) -> [UInt8] {
        var message = ProtobufWriter()
        message.field(1, UInt64(nonce))
        message.field(4, message: [])
        return frame(message.bytes)
    }

    public static func frame(_ message: [UInt8]) -> [UInt8] {
        COBS.encode(message + CRC32.littleEndian(message)) + [0]
    }

    /// A module as the display reports it.
    public struct ModuleState: Equatable, Sendable {
        public enum State: UInt64, Sendable { case normal = 0, lookForHome, sensorError, panic, disabled }
        public var state: State = .normal
        public var flap: Int = 0
        public var moving = false
        public var homeState = false
        public var unexpectedHome = 0
        public var missedHome = 0
        public init() {}
    }

    /// What the display sends.
    public enum FromDisplay: Equatable, Sendable {
        case ack(nonce: UInt32)
        case state(modules: [ModuleState], loopbacksOK: Bool)
        case log(String)
        case general(protocolVersion: Int, uptimeMillis: Int)
        case other(field: Int)
    }

    /// Reads one frame from the display (its bytes between delimiters): COBS, CRC, protobuf.
    public static func decode(_ stuffed: [UInt8]) throws(SerialFrameError) -> FromDisplay {
        let message = try unframe(stuffed)
        var reader = ProtobufReader(message)
        do {
            guard let (number, value) = try reader.next(), case .bytes(let body) = value else {
                throw SerialFrameError.malformed("an empty or non-message FromSplitflap")
            }
            var inner = ProtobufReader(body)
            switch number {
            case 3:
                var nonce: UInt64 = 0
                while let f = try inner.next() { if f.number == 1, case .varint(let v) = f.value { nonce = v } }
                return .ack(nonce: UInt32(truncatingIfNeeded: nonce))
            case 1:
                var modules: [ModuleState] = []
                var loopbacks = false
                while let f = try inner.next() {
                    switch (f.number, f.value) {
                    case (1, .bytes(let m)): modules.append(try moduleState(m))
                    case (2, .varint(let v)): loopbacks = v != 0
                    default: break
                    }
                }
                return .state(modules: modules, loopbacksOK: loopbacks)
            case 2:
                var text = ""
                while let f = try inner.next() { if f.number == 1, case .bytes(let b) = f.value { text = String(decoding: b, as: UTF8.self) } }
                return .log(text)
            case 5:
                var version = 0, uptime = 0
                while let f = try inner.next() {
                    if case .varint(let v) = f.value { if f.number == 1 { version = Int(clamping: v) } else if f.number == 2 { uptime = Int(clamping: v) } }
                }
                return .general(protocolVersion: version, uptimeMillis: uptime)
            default:
                return .other(field: number)
            }
        } catch let e as ProtobufError {
            throw SerialFrameError.malformed(e.description)
        } catch let e as SerialFrameError {
            throw e
        } catch {
            throw SerialFrameError.malformed("\(error)")
        }
    }

    private static func moduleState(_ bytes: [UInt8]) throws -> ModuleState {
        var reader = ProtobufReader(bytes)
        var m = ModuleState()
        while let f = try reader.next() {
            guard case .varint(let v) = f.value else { continue }
            switch f.number {
            case 1: m.state = ModuleState.State(rawValue: v) ?? .panic
            case 2: m.flap = Int(clamping: v)
            case 3: m.moving = v != 0
            case 4: m.homeState = v != 0
            case 5: m.unexpectedHome = Int(clamping: v)
            case 6: m.missedHome = Int(clamping: v)
            default: break
            }
        }
        return m
    }

    /// The message inside a frame whose CRC matches.
    static func unframe(_ stuffed: [UInt8]) throws(SerialFrameError) -> [UInt8] {
        guard let raw = COBS.decode(stuffed) else { throw .malformed("not COBS") }
        guard raw.count >= 4 else { throw .malformed("\(raw.count) bytes, shorter than a CRC") }
        let body = Array(raw.dropLast(4))
        guard Array(raw.suffix(4)) == CRC32.littleEndian(body) else { throw .crc }
        return body
    }
}

/// Why a frame from the bus was not taken.
public enum SerialFrameError: Error, Equatable, CustomStringConvertible {
    case crc
    case malformed(String)
    public var description: String {
        switch self {
        case .crc: "CRC mismatch"
        case .malformed(let why): why
        }
    }
}
