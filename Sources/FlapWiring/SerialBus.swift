/// A kind of serial module bus, as the config file names it, with what the config needs of its
/// protocol: the line its modules expect unless the file says otherwise, how often an unanswered
/// frame is sent again, and how many modules it can address. The protocols themselves live in
/// `FlapSerial` and take these values from here.
public enum SerialBus: String, Sendable, CaseIterable {
    /// The open splitflap display (scottbez1/splitflap).
    case splitflap
    /// flapbus v1 (`hardware/flapbus.md`).
    case flapbus
    /// Krone FBM station modules.
    case krone
    /// Omega RS-485 station modules.
    case omega

    /// The line the modules expect.
    public var line: SerialLineSettings {
        switch self {
        case .splitflap: SerialLineSettings(baud: 230_400)
        case .flapbus: SerialLineSettings(baud: 115_200)
        case .krone: SerialLineSettings(baud: 4800, parity: .even)
        case .omega: SerialLineSettings(baud: 19_200)
        }
    }

    /// How long to wait for an answer before a frame is sent again.
    public var retryMilliseconds: Int { self == .splitflap ? 250 : 100 }

    /// The most modules one bus takes, when its protocol has a limit below its addresses: the
    /// splitflap firmware decodes a config of at most 255.
    public var maxModules: Int? { self == .splitflap ? 255 : nil }
}
