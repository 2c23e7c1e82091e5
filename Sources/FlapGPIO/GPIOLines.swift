import CGPIOD
import FlapWiring
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why a GPIO chip or line could not be used, said so that the reader can fix it.
public struct GPIOError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A board's output lines: every write sets all of them at once.
public protocol GPIOOutputs: AnyObject, Sendable {
    func write(_ levels: [Bool]) throws(GPIOError)
}

/// Output lines of a chip through libgpiod (v1 or v2, as built), requested together.
/// (`@unchecked Sendable`: `values` is touched only by `write`, which only the board's one step
/// thread calls.)
public final class LibgpiodOutputs: GPIOOutputs, @unchecked Sendable {
    private let request: UnsafeMutablePointer<flap_gpio_request>
    public let chip: String
    public let lines: [Int]
    private var values: [Int32]

    /// Requests `lines` of `chip` (a path such as /dev/gpiochip0, or its name gpiochip0) as
    /// outputs at `initial` from the moment they are granted (no other level first). Fails
    /// naming the chip, the line and the fix.
    public init(chip: String, lines: [Int], initial: [Bool], consumer: String = "flapd") throws(GPIOError) {
        request = try Self.request(chip, lines: lines, output: true, initial: initial, bias: 0, consumer: consumer,
                                   missing: "(check the line numbers in the board's gpio block)")
        self.chip = chip
        self.lines = lines
        values = initial.map { $0 ? 1 : 0 }
    }

    public func write(_ levels: [Bool]) throws(GPIOError) {
        for i in levels.indices { values[i] = levels[i] ? 1 : 0 }
        guard flap_gpio_set(request, values) == 0 else {
            throw GPIOError("writing lines \(lines) of \(chip) failed: \(String(cString: strerror(errno)))")
        }
    }

    deinit { flap_gpio_release(request) }

    /// Which libgpiod API this build speaks ("v1" or "v2").
    public static var api: String { String(cString: flap_gpio_api()) }

    static func path(_ chip: String) -> String { chip.hasPrefix("/") ? chip : "/dev/" + chip }

    /// Requests lines of a chip (outputs starting low, or inputs with `bias` and both edges),
    /// with an error that names the chip, the line and the fix when it cannot.
    static func request(_ chip: String, lines: [Int], output: Bool, initial: [Bool] = [], bias: Int32, consumer: String,
                        missing: String) throws(GPIOError) -> UnsafeMutablePointer<flap_gpio_request> {
        let path = path(chip)
        let count = flap_gpio_chip_lines(path)
        guard count >= 0 else { throw chipError(chip, path: path, errno) }
        if let bad = lines.first(where: { $0 < 0 || $0 >= Int(count) }) {
            throw GPIOError("\(chip) has lines 0–\(count - 1); line \(bad) does not exist \(missing)")
        }
        let levels = lines.indices.map { Int32(initial.indices.contains($0) && initial[$0] ? 1 : 0) }
        guard let r = flap_gpio_request_lines(path, lines.map { UInt32($0) }, UInt32(lines.count), output ? 1 : 0, levels, bias, consumer) else {
            throw lineError(chip, lines: lines, errno)
        }
        return r
    }

    static func chipError(_ chip: String, path: String, _ e: Int32) -> GPIOError {
        switch e {
        case ENOENT: GPIOError("no GPIO chip \(chip) (\(path) does not exist; `gpiodetect` lists the chips)")
        case EACCES, EPERM: GPIOError("no permission to open \(path): add flapd's user to the gpio group (`sudo usermod -aG gpio flapd`) or see hardware/README.md for the udev rule")
        default: GPIOError("cannot open \(path): \(String(cString: strerror(e)))")
        }
    }

    static func lineError(_ chip: String, lines: [Int], _ e: Int32) -> GPIOError {
        switch e {
        case EBUSY: GPIOError("a line of \(chip) among \(lines) is busy: another program (or a kernel driver) holds it; `gpioinfo \(chip)` shows who")
        case EACCES, EPERM: GPIOError("no permission to request lines \(lines) of \(chip): add flapd's user to the gpio group")
        default: GPIOError("cannot request lines \(lines) of \(chip): \(String(cString: strerror(e)))")
        }
    }
}

/// A board's input lines (home sensors): their edges, one at a time.
public protocol GPIOInputs: AnyObject, Sendable {
    /// The next edge within `timeoutNanos`: the index of its line among the requested ones,
    /// whether it rose, and when (CLOCK_MONOTONIC ns, the kernel's timestamp: the reader may
    /// take it late, the instant stays true); nil when none came.
    func edge(timeoutNanos: Int64) throws(GPIOError) -> SensorEdge?
}

/// An edge on an input line: which line (its index among the requested ones), which way, and
/// the instant it happened on CLOCK_MONOTONIC.
public struct SensorEdge: Sendable, Equatable {
    public var index: Int, rising: Bool, at: Int64
    public init(index: Int, rising: Bool, at: Int64) { self.index = index; self.rising = rising; self.at = at }
}

/// Input lines of a chip through libgpiod, both edges watched, with a bias.
/// (`@unchecked Sendable`: nothing of it changes after `init`; only the sensor thread reads
/// edges through the request.)
public final class LibgpiodInputs: GPIOInputs, @unchecked Sendable {
    public typealias Bias = InputBias
    private let request: UnsafeMutablePointer<flap_gpio_request>
    public let chip: String
    public let lines: [Int]

    public init(chip: String, lines: [Int], bias: Bias, consumer: String = "flapd") throws(GPIOError) {
        let b: Int32 = switch bias { case .none: 0; case .pullUp: 1; case .pullDown: 2 }
        request = try LibgpiodOutputs.request(chip, lines: lines, output: false, bias: b, consumer: consumer,
                                              missing: "(check the home sensor lines)")
        self.chip = chip
        self.lines = lines
    }

    public func edge(timeoutNanos: Int64) throws(GPIOError) -> SensorEdge? {
        var index: UInt32 = 0, rising: Int32 = 0, ns: UInt64 = 0
        switch flap_gpio_read_edge(request, timeoutNanos, &index, &rising, &ns) {
        case 1: return SensorEdge(index: Int(index), rising: rising != 0, at: Int64(clamping: ns))
        case 0: return nil
        default: throw GPIOError("reading home sensor edges on \(chip) failed: \(String(cString: strerror(errno)))")
        }
    }

    deinit { flap_gpio_release(request) }
}

/// Writes counted and, when asked, kept: the benchmark's sink and the unit tests' recorder.
public final class RecordingOutputs: GPIOOutputs, Sendable {
    private let state = Mutex<(writes: Int, recorded: [[Bool]])>((0, []))
    private let keep: Bool
    public init(keep: Bool = true) { self.keep = keep }
    public var writes: Int { state.withLock { $0.writes } }
    public var recorded: [[Bool]] { state.withLock { $0.recorded } }
    public func write(_ levels: [Bool]) throws(GPIOError) {
        state.withLock { s in
            s.writes += 1
            if keep { s.recorded.append(levels) }
        }
    }
}
