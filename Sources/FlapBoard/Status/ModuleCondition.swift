import FlapGPIO
import FlapSerial

/// A module's state as `/status` names it: one vocabulary for every output that reports one —
/// GPIO home sensors, an open splitflap display, flapbus controllers. A module is faulty when it
/// is `sensor_error`, `faulty` or `disabled`.
public enum ModuleCondition: String, Sendable, Codable {
    case normal, unhomed, homing, sensorError = "sensor_error", faulty, disabled

    public var isFaulty: Bool { self == .sensorError || self == .faulty || self == .disabled }

    init(_ gpio: HomeTracker.State) {
        switch gpio {
        case .normal: self = .normal
        case .unhomed: self = .unhomed
        case .homing: self = .homing
        case .faulty: self = .faulty
        }
    }

    init(_ splitflap: SplitflapProtocol.ModuleState.State) {
        switch splitflap {
        case .normal: self = .normal
        case .lookForHome: self = .homing
        case .sensorError: self = .sensorError
        case .panic: self = .faulty
        case .disabled: self = .disabled
        }
    }

    /// A flapbus STATUS state (`hardware/flapbus.md`); an unknown one counts as faulty.
    init(flapbus state: UInt8) {
        self = [.normal, .homing, .sensorError, .faulty, .disabled][safe: Int(state)] ?? .faulty
    }
}

private extension Array {
    subscript(safe i: Int) -> Element? { indices.contains(i) ? self[i] : nil }
}
