#if canImport(Glibc)
import Glibc
#endif
import CSerialPort
import FlapWiring
import Synchronization

/// A real serial port through libserialport: name, baud, parity, stop bits and flow control
/// from the config. (libserialport refuses pseudo-terminals; `TermiosPort` serves those.)
public final class SerialPortTransport: SerialTransport, Sendable {
    /// How the line is set.
    public typealias Settings = SerialLineSettings

    private let port: Mutex<OpaquePointer?>
    public let name: String

    public init(name: String, settings: Settings) throws(SerialError) {
        var p: OpaquePointer?
        guard sp_get_port_by_name(name, &p) == SP_OK, let p else {
            throw SerialError(.find, "no serial port \(name)\(Self.lastError()) — is the adapter plugged in, and is flapd in the dialout group?", errno: Self.lastErrno())
        }
        guard sp_open(p, SP_MODE_READ_WRITE) == SP_OK else {
            let (why, code) = (Self.lastError(), Self.lastErrno())
            sp_free_port(p)
            throw SerialError(.open, "cannot open \(name)\(why)", errno: code)
        }
        let parity: sp_parity = switch settings.parity { case .none: SP_PARITY_NONE; case .even: SP_PARITY_EVEN; case .odd: SP_PARITY_ODD }
        let flow: sp_flowcontrol = switch settings.flowControl {
        case .none: SP_FLOWCONTROL_NONE
        case .rtscts: SP_FLOWCONTROL_RTSCTS
        case .xonxoff: SP_FLOWCONTROL_XONXOFF
        }
        let steps: [(String, sp_return)] = [
            ("baud \(settings.baud)", sp_set_baudrate(p, Int32(settings.baud))),
            ("8 data bits", sp_set_bits(p, 8)),
            ("parity \(settings.parity)", sp_set_parity(p, parity)),
            ("\(settings.stopBits) stop bits", sp_set_stopbits(p, Int32(settings.stopBits))),
            ("flow control \(settings.flowControl)", sp_set_flowcontrol(p, flow)),
        ]
        if let failed = steps.first(where: { $0.1 != SP_OK }) {
            let (why, code) = (Self.lastError(), Self.lastErrno())
            sp_close(p)
            sp_free_port(p)
            throw SerialError(.configure, "\(name): cannot set \(failed.0)\(why)", errno: code)
        }
        self.name = name
        port = Mutex(p)
    }

    public func write(_ bytes: [UInt8]) throws(SerialError) {
        try port.withLock { (p: inout OpaquePointer?) throws(SerialError) in
            guard let p else { throw SerialError(.closed, "\(name) is closed") }
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { sp_blocking_write(p, $0.baseAddress, $0.count, 1000) }
                guard n.rawValue >= 0 else { throw SerialError(.write, "write to \(name) failed\(Self.lastError())", errno: Self.lastErrno()) }
                offset += Int(n.rawValue)
                if n.rawValue == 0 { throw SerialError(.write, "write to \(name) timed out", errno: ETIMEDOUT) }
            }
            _ = sp_drain(p)
        }
    }

    public func read(max: Int, timeoutMs: Int) throws(SerialError) -> [UInt8] {
        let p = port.withLock { $0 }
        guard let p else { throw SerialError(.closed, "\(name) is closed") }
        var buffer = [UInt8](repeating: 0, count: max)
        // One byte with the timeout, then whatever else is already there.
        let first = buffer.withUnsafeMutableBytes { sp_blocking_read(p, $0.baseAddress, 1, UInt32(timeoutMs)) }
        guard first.rawValue >= 0 else { throw SerialError(.read, "read from \(name) failed\(Self.lastError())", errno: Self.lastErrno()) }
        guard first.rawValue > 0 else { return [] }
        let more = buffer.withUnsafeMutableBytes { sp_nonblocking_read(p, $0.baseAddress! + 1, max - 1) }
        return Array(buffer[0..<(1 + Int(Swift.max(0, more.rawValue)))])
    }

    public func sendBreak(milliseconds: Int) throws(SerialError) {
        try port.withLock { (p: inout OpaquePointer?) throws(SerialError) in
            guard let p else { throw SerialError(.closed, "\(name) is closed") }
            _ = sp_drain(p)
            guard sp_start_break(p) == SP_OK else { throw SerialError(.brk, "cannot send a break on \(name)\(Self.lastError())", errno: Self.lastErrno()) }
            usleep(useconds_t(milliseconds * 1000))
            _ = sp_end_break(p)
        }
    }

    public func close() {
        port.withLock { p in
            if let q = p { sp_close(q); sp_free_port(q) }
            p = nil
        }
    }

    /// libserialport's last error number (errno), if it has one.
    static func lastErrno() -> Int32? {
        let code = sp_last_error_code()
        return code == 0 ? nil : code
    }

    static func lastError() -> String {
        guard let message = sp_last_error_message() else { return "" }
        defer { sp_free_error_message(message) }
        return ": " + String(cString: message)
    }
}

extension SerialPortTransport {
    /// Opens a port through libserialport; a device libserialport refuses but termios can drive
    /// (a pseudo-terminal, say) is opened through `TermiosPort` instead, with a note saying so.
    public static func open(_ name: String, settings: Settings) throws(SerialError) -> (transport: any SerialTransport, note: String?) {
        do {
            return (try SerialPortTransport(name: name, settings: settings), nil)
        } catch {
            guard settings.flowControl == .none,
                  let termios = try? TermiosPort(path: name, baud: settings.baud, parity: settings.parity, stopBits: settings.stopBits)
            else { throw error }
            return (termios, "\(name): libserialport cannot drive it (\(error)); using plain termios")
        }
    }
}
