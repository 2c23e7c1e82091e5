import FlapWiring
/// Salvaged station modules (the bytes; the transport sends them).
///
/// Krone FBM, 4800 baud, even parity: a command byte `0b1001_cccc` (bit 6: the address is over
/// 127, bit 5: the code is), then the low 7 bits of the address and of the code as the command
/// needs. Each module is given its code with SET_CODE, then SET_ALL makes them all move.
public enum KroneFBM {
    public static let baud = SerialBus.krone.line.baud
    public enum Command: UInt8, Sendable {
        case setAll = 1, setHome, reset, readStatus, readCode, lock, unlock, setCode, startCalBR2, startCalBR1, stopCal, setTable
    }

    public static func setCode(address: UInt8, code: UInt8) -> [UInt8] {
        [0x90 | Command.setCode.rawValue | (address > 127 ? 0x40 : 0) | (code > 127 ? 0x20 : 0), address & 0x7F, code & 0x7F]
    }

    public static func setAll() -> [UInt8] { [0x90 | Command.setAll.rawValue] }

    /// A command addressed to one module with no code (SET_HOME, RESET, READ_STATUS, …).
    public static func command(_ c: Command, address: UInt8) -> [UInt8] {
        [0x90 | c.rawValue | (address > 127 ? 0x40 : 0), address & 0x7F]
    }
}

/// Omega RS-485 station displays, 19 200 baud: each message preceded by a 50 ms break, then
/// `0xFF, command, address[, value]`.
public enum OmegaRS485 {
    public static let baud = SerialBus.omega.line.baud
    public static let breakMilliseconds = 50
    public enum Command: UInt8, Sendable {
        case setPosition = 0xC0, setHome = 0xC5, setAddress = 0xCE, readPosition = 0xD0, readSerial = 0xDF
    }

    public static func setPosition(address: UInt8, position: UInt8) -> [UInt8] { [0xFF, Command.setPosition.rawValue, address, position] }

    public static func command(_ c: Command, address: UInt8, value: UInt8? = nil) -> [UInt8] {
        [0xFF, c.rawValue, address] + (value.map { [$0] } ?? [])
    }
}

/// A bus of salvaged station modules: how modules are told their flaps, and how the line is set.
/// Neither protocol answers a move, so the bytes are the whole story; a module's flap is its
/// code (Krone) or position (Omega), which is its index on the board's drum.
public enum StationBus: String, Sendable, CaseIterable {
    case krone, omega

    /// The messages that move these modules, in order: Krone sets each module's code, then
    /// SET_ALL starts them; an Omega module moves as soon as it is told.
    public func messages(_ targets: [(address: UInt8, flap: UInt8)]) -> [[UInt8]] {
        switch self {
        case .krone: targets.map { KroneFBM.setCode(address: $0.address, code: $0.flap) } + [KroneFBM.setAll()]
        case .omega: targets.map { OmegaRS485.setPosition(address: $0.address, position: $0.flap) }
        }
    }

    /// Milliseconds of break before every message (Omega's modules wait for one).
    public var breakMilliseconds: Int { self == .omega ? OmegaRS485.breakMilliseconds : 0 }

    /// The line the modules expect.
    public var settings: SerialLineSettings {
        switch self {
        case .krone: SerialBus.krone.line
        case .omega: SerialBus.omega.line
        }
    }
}
