#if canImport(Glibc)
import FlapWiring
import Glibc
#endif

/// A byte stream to a module bus.
public protocol SerialTransport: AnyObject, Sendable {
    /// Writes every byte (looping over partial writes) or throws.
    func write(_ bytes: [UInt8]) throws(SerialError)
    /// What has arrived, waiting at most `timeoutMs` for the first byte; empty on timeout.
    func read(max: Int, timeoutMs: Int) throws(SerialError) -> [UInt8]
    /// Holds the line in break (space) for `milliseconds`, after what was written has gone.
    func sendBreak(milliseconds: Int) throws(SerialError)
    func close()
}

/// Why the bus failed: what was being done, the system's error number when it gave one (the
/// cause, as data), and a sentence for the log.
public struct SerialError: Error, CustomStringConvertible, Equatable {
    /// What failed.
    public enum Operation: String, Sendable {
        case find, open, configure, write, read, brk = "break", closed, gone
    }
    public let operation: Operation
    public let errno: Int32?
    public let description: String

    public init(_ operation: Operation, _ description: String, errno: Int32? = nil) {
        self.operation = operation
        self.errno = errno
        self.description = description
    }

    /// Whether `other` is the same failure again (same operation, same cause), whatever its words.
    public func isSame(as other: SerialError?) -> Bool {
        guard let other else { return false }
        return operation == other.operation && errno == other.errno
    }
}

/// A serial device through plain termios: raw 8-bit, the given speed, parity and stop bits, no
/// flow control. Works on pseudo-terminals too (libserialport refuses them), which is what the
/// protocol tests use.
/// (`@unchecked Sendable`: it holds only its descriptor, which never changes.)
public final class TermiosPort: SerialTransport, @unchecked Sendable {
    private let fd: Int32

    public init(path: String, baud: Int, parity: SerialPortTransport.Settings.Parity = .none, stopBits: Int = 1) throws(SerialError) {
        fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw SerialError(.open, "cannot open \(path): \(String(cString: strerror(errno)))", errno: errno) }
        var t = termios()
        guard tcgetattr(fd, &t) == 0 else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            throw SerialError(.configure, "\(path) is not a terminal: \(why)", errno: errno)
        }
        cfmakeraw(&t)
        let speed = Self.speed(baud)
        cfsetispeed(&t, speed)
        cfsetospeed(&t, speed)
        if parity != .none { t.c_cflag |= tcflag_t(PARENB) | (parity == .odd ? tcflag_t(PARODD) : 0) }
        if stopBits == 2 { t.c_cflag |= tcflag_t(CSTOPB) }
        tcsetattr(fd, TCSANOW, &t)
    }

    /// Wraps an open descriptor (one end of a pty pair, say); it is closed with the port.
    public init(descriptor: Int32) {
        fd = descriptor
        var t = termios()
        if tcgetattr(fd, &t) == 0 {
            cfmakeraw(&t)
            tcsetattr(fd, TCSANOW, &t)
        }
    }

    public func write(_ bytes: [UInt8]) throws(SerialError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw SerialError(.write, "write failed: \(String(cString: strerror(errno)))", errno: errno)
            }
            offset += n
        }
    }

    public func read(max: Int, timeoutMs: Int) throws(SerialError) -> [UInt8] {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&p, 1, Int32(timeoutMs))
        if ready < 0 { if errno == EINTR { return [] }; throw SerialError(.read, "poll failed: \(String(cString: strerror(errno)))", errno: errno) }
        if ready == 0 { return [] }
        if p.revents & Int16(POLLHUP | POLLERR) != 0, p.revents & Int16(POLLIN) == 0 { throw SerialError(.gone, "the port went away") }
        var buffer = [UInt8](repeating: 0, count: max)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return [] }
            throw SerialError(.read, "read failed: \(String(cString: strerror(errno)))", errno: errno)
        }
        if n == 0 { throw SerialError(.gone, "the port went away") }
        return Array(buffer[0..<n])
    }

    public func sendBreak(milliseconds: Int) throws(SerialError) {
        tcdrain(fd)
        // A pseudo-terminal has no line to hold: the kernel accepts the request and does nothing.
        guard ioctl(fd, UInt(TIOCSBRK)) == 0 else { throw SerialError(.brk, "cannot send a break: \(String(cString: strerror(errno)))", errno: errno) }
        usleep(useconds_t(milliseconds * 1000))
        _ = ioctl(fd, UInt(TIOCCBRK))
    }

    public func close() { Glibc.close(fd) }

    static func speed(_ baud: Int) -> speed_t {
        switch baud {
        case 4800: speed_t(B4800)
        case 9600: speed_t(B9600)
        case 19_200: speed_t(B19200)
        case 38_400: speed_t(B38400)
        case 57_600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        default: speed_t(B115200)
        }
    }
}

/// Cuts a byte stream into frames at 0x00; counts bytes that could not belong to a frame.
public struct FrameSplitter: Sendable {
    private var pending: [UInt8] = []
    /// The most a frame may hold; a longer run without a delimiter is garbage, dropped.
    public let maxFrame: Int
    public private(set) var droppedBytes = 0

    public init(maxFrame: Int = 2048) { self.maxFrame = maxFrame }

    /// The complete stuffed frames (without their delimiters) the new bytes finish.
    public mutating func take(_ bytes: [UInt8]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for b in bytes {
            if b == 0 {
                if !pending.isEmpty { frames.append(pending) }
                pending.removeAll(keepingCapacity: true)
            } else if pending.count >= maxFrame {
                droppedBytes += pending.count
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(b)
            }
        }
        return frames
    }
}
