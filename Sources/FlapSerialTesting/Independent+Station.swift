extension Independent {
    /// A salvaged module's command as read off the wire.
    public struct StationCommand: Equatable, Sendable, CustomStringConvertible {
        public var command: Int
        public var address: Int?
        public var value: Int?
        public init(command: Int, address: Int? = nil, value: Int? = nil) {
            self.command = command; self.address = address; self.value = value
        }
        public var description: String { "\(command)(\(address.map(String.init) ?? "-"), \(value.map(String.init) ?? "-"))" }
    }

    /// Krone FBM, from the anchors: a command byte 1·A·C·1·cccc (A: the address is over 127, C:
    /// the code is), then 7-bit argument bytes — the only bytes under 0x80.
    public static func krone(_ stream: [UInt8]) -> [StationCommand] {
        var out: [StationCommand] = []
        var i = 0
        while i < stream.count {
            let b = stream[i]
            i += 1
            guard b & 0b1001_0000 == 0b1001_0000 else { continue }
            var args: [Int] = []
            while i < stream.count, stream[i] < 0x80 { args.append(Int(stream[i])); i += 1 }
            let address = args.count > 0 ? args[0] + (b & 0x40 != 0 ? 128 : 0) : nil
            let code = args.count > 1 ? args[1] + (b & 0x20 != 0 ? 128 : 0) : nil
            out.append(StationCommand(command: Int(b & 0x0F), address: address, value: code))
        }
        return out
    }

    /// Omega RS-485: `0xFF, command, address` and, for SET_POSITION (0xC0) and SET_ADDRESS
    /// (0xCE), a value.
    public static func omega(_ stream: [UInt8]) -> [StationCommand] {
        var out: [StationCommand] = []
        var i = 0
        while i + 2 < stream.count {
            guard stream[i] == 0xFF else { i += 1; continue }
            let command = Int(stream[i + 1]), takesValue = command == 0xC0 || command == 0xCE
            guard !takesValue || i + 3 < stream.count else { break }
            out.append(StationCommand(command: command, address: Int(stream[i + 2]), value: takesValue ? Int(stream[i + 3]) : nil))
            i += takesValue ? 4 : 3
        }
        return out
    }
}
