/// How a serial line is set: speed, parity, stop bits, flow control.
public struct SerialLineSettings: Sendable, Equatable {
    public enum Parity: String, Sendable, CaseIterable { case none, even, odd }
    public enum FlowControl: String, Sendable, CaseIterable { case none, rtscts, xonxoff }
    public var baud: Int
    public var parity = Parity.none
    public var stopBits = 1
    public var flowControl = FlowControl.none
    public init(baud: Int, parity: Parity = .none, stopBits: Int = 1, flowControl: FlowControl = .none) {
        self.baud = baud; self.parity = parity; self.stopBits = stopBits; self.flowControl = flowControl
    }
}
