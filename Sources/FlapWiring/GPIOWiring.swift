/// How a board's modules hang off GPIO lines: every number is a line offset on `chip`; the lines
/// are requested together as outputs. Modules count row by row.
public struct GPIOWiring: Hashable, Sendable {
    /// The module kinds.
    public enum Kind: Hashable, Sendable {
        /// STEP/DIR drivers (A4988, DRV8825, TMC2208): one STEP line a module; DIR and ENABLE
        /// lines shared (one) or one a module.
        case stepDir(StepDir)
        /// 28BYJ-48 motors on ULN2003 boards: four coil lines a module.
        case unipolar(coils: [[Int]], halfStep: Bool)
        /// 74HC595 chains (data, clock, latch) of four coil bits a motor, as Chainlink boards do.
        case shiftChain(ShiftChain)
        /// MAX7219 8 × 8 LED modules in a chain (DIN, CLK, CS), one a module.
        case max7219(MAX7219Chain)
    }

    public struct StepDir: Hashable, Sendable {
        public var step: [Int]
        public var dir: [Int]
        public var enable: [Int]
        public var pulseNanos: Int64
        public var stepActiveLow: Bool
        public var enableActiveLow: Bool
        /// The DIR level that turns a drum forward.
        public var forwardLevel: Bool
        public init(step: [Int], dir: [Int] = [], enable: [Int] = [], pulseNanos: Int64 = 5_000,
                    stepActiveLow: Bool = false, enableActiveLow: Bool = true, forwardLevel: Bool = true) {
            self.step = step; self.dir = dir; self.enable = enable; self.pulseNanos = pulseNanos
            self.stepActiveLow = stepActiveLow; self.enableActiveLow = enableActiveLow; self.forwardLevel = forwardLevel
        }
    }

    public struct ShiftChain: Hashable, Sendable {
        public var data: Int, clock: Int, latch: Int
        /// Bits a module takes in the chain (≥ 4; its coils are the first four, the rest stay 0).
        public var bitsPerModule: Int
        /// The module at each chain position, the position nearest the Pi first.
        public var order: [Int]
        public var halfStep: Bool
        /// How long each level of DATA, CLOCK and LATCH is held (0: as fast as the lines go) — for
        /// slow opto-isolated or long chains.
        public var holdNanos: Int64
        public init(data: Int, clock: Int, latch: Int, bitsPerModule: Int = 4, order: [Int], halfStep: Bool = false, holdNanos: Int64 = 0) {
            self.data = data; self.clock = clock; self.latch = latch
            self.bitsPerModule = bitsPerModule; self.order = order; self.halfStep = halfStep; self.holdNanos = holdNanos
        }
    }

    public var chip: String
    public var kind: Kind

    public init(chip: String, kind: Kind) {
        self.chip = chip; self.kind = kind
    }

    /// How long each write is held before the next (a chain's `holdNanos`; else 0).
    public var holdNanos: Int64 {
        switch kind {
        case .shiftChain(let c): c.holdNanos
        case .max7219(let m): m.holdNanos
        default: 0
        }
    }

    /// Every output line, each once, in the order the wiring names them.
    public var lines: [Int] {
        let all: [Int] = switch kind {
        case .stepDir(let s): s.step + s.dir + s.enable
        case .unipolar(let coils, _): coils.flatMap { $0 }
        case .shiftChain(let c): [c.data, c.clock, c.latch]
        case .max7219(let m): [m.din, m.clk, m.cs]
        }
        var seen: Set<Int> = []
        return all.filter { seen.insert($0).inserted }
    }

    /// Coil patterns (IN1…IN4) of a 28BYJ-48, one per step.
    public static let fullStep: [[Bool]] = [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]].map { $0.map { $0 == 1 } }
    public static let halfStep: [[Bool]] = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0],
                                            [0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1], [1, 0, 0, 1]].map { $0.map { $0 == 1 } }
}

/// A chain of MAX7219 8 × 8 LED modules (DIN → DOUT from one to the next) on three lines: every
/// update shifts one 16-bit word (register, data; MSB first, DIN read on CLK's rising edge) into
/// each device, the farthest's first, and latches them all on CS's rising edge.
public struct MAX7219Chain: Hashable, Sendable {
    public var din: Int, clk: Int, cs: Int
    /// The module at each chain position, the Pi's end first.
    public var order: [Int]
    /// Brightness 0–15.
    public var intensity: UInt8
    public var holdNanos: Int64

    public init(din: Int, clk: Int, cs: Int, order: [Int], intensity: UInt8 = 4, holdNanos: Int64 = 0) {
        self.din = din; self.clk = clk; self.cs = cs; self.order = order; self.intensity = intensity; self.holdNanos = holdNanos
    }
}

/// The bias of an input line (home sensors).
public enum InputBias: String, Sendable, CaseIterable { case none, pullUp = "pull_up", pullDown = "pull_down" }
