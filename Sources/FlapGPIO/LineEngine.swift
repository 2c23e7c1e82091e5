import FlapWiring
/// The levels of a board's output lines as its modules step: each call returns the level
/// vectors (one value per line of `wiring.lines`, in that order) to write, in order. Pure state,
/// no I/O — the driver's thread writes what it returns, and the benchmark times it.
public struct LineEngine: Sendable {
    public let wiring: GPIOWiring
    /// The index of each chip offset in `levels`.
    private let index: [Int: Int]
    public private(set) var levels: [Bool]
    /// Each module's place in its coil sequence.
    private var phase: [Int]
    /// Modules whose coils are energised (unipolar and chains).
    private var energised: [Bool]

    public init(wiring: GPIOWiring, modules: Int) {
        self.wiring = wiring
        let lines = wiring.lines
        index = Dictionary(uniqueKeysWithValues: lines.enumerated().map { ($1, $0) })
        levels = Array(repeating: false, count: lines.count)
        phase = Array(repeating: 0, count: modules)
        energised = Array(repeating: false, count: modules)
        if case .stepDir(let s) = wiring.kind {
            for l in s.step { levels[slot(l)] = s.stepActiveLow }
            for l in s.dir { levels[slot(l)] = s.forwardLevel }
            for l in s.enable { levels[slot(l)] = s.enableActiveLow }  // disabled
        }
    }

    /// The place of a chip offset in `levels`. `GPIOWiring.lines` is every line its kind names,
    /// by construction, so a line not there is a bug here, said as such.
    private func slot(_ line: Int) -> Int {
        guard let i = index[line] else { preconditionFailure("GPIO line \(line) is not among the wiring's lines \(wiring.lines)") }
        return i
    }

    /// A module's place in its coil sequence: the pattern its rotor stands at (0 for STEP/DIR).
    public func phase(of module: Int) -> Int { phase[module] }

    /// Puts a module's coil sequence at `phase` (a restart: where the last run left the rotor),
    /// so its next step energises the pattern after that one.
    public mutating func setPhase(_ module: Int, _ value: Int) {
        let count: Int = switch wiring.kind {
        case .unipolar(_, let half): half ? GPIOWiring.halfStep.count : GPIOWiring.fullStep.count
        case .shiftChain(let c): c.halfStep ? GPIOWiring.halfStep.count : GPIOWiring.fullStep.count
        case .stepDir, .max7219: 1
        }
        phase[module] = ((value % count) + count) % count
    }

    /// What the lines are at rest: STEP inactive, DIR forward, drivers disabled, coils off.
    public var initial: [Bool] { levels }

    /// These modules take one step now. STEP/DIR: their STEP lines go active (`endPulse` ends
    /// it); coils: the next pattern of their sequence.
    public mutating func step(_ modules: [Int]) -> [[Bool]] {
        switch wiring.kind {
        case .stepDir(let s):
            for m in modules { levels[slot(s.step[m])] = !s.stepActiveLow }
            return [levels]
        case .unipolar(let coils, let half):
            let sequence = half ? GPIOWiring.halfStep : GPIOWiring.fullStep
            for m in modules {
                phase[m] = (phase[m] + 1) % sequence.count
                for (i, l) in coils[m].enumerated() { levels[slot(l)] = sequence[phase[m]][i] }
            }
            return [levels]
        case .shiftChain(let c):
            let sequence = c.halfStep ? GPIOWiring.halfStep : GPIOWiring.fullStep
            for m in modules { phase[m] = (phase[m] + 1) % sequence.count; energised[m] = true }
            return shiftOut(c)
        case .max7219:
            return []
        }
    }

    /// How many of `step`'s writes come after the one that moves the motors: a chain of
    /// 74HC595s moves them on LATCH's rising edge, then lowers LATCH (1); every other kind moves
    /// them with its one write (0). The step journal marks the places in flight around that write.
    public var writesAfterTheMove: Int {
        if case .shiftChain = wiring.kind { return 1 }
        return 0
    }

    /// STEP/DIR: these modules' STEP lines go back to inactive.
    public mutating func endPulse(_ modules: [Int]) -> [[Bool]] {
        guard case .stepDir(let s) = wiring.kind else { return [] }
        for m in modules { levels[slot(s.step[m])] = s.stepActiveLow }
        return [levels]
    }

    /// Drivers on or off (STEP/DIR with ENABLE lines): `modules` nil means a shared line.
    public mutating func enable(_ on: Bool, modules: [Int]) -> [[Bool]] {
        guard case .stepDir(let s) = wiring.kind, !s.enable.isEmpty else { return [] }
        let lines = s.enable.count == 1 ? s.enable : modules.map { s.enable[$0] }
        for l in lines { levels[slot(l)] = on != s.enableActiveLow }
        return [levels]
    }

    /// Idle modules' coils off, so they stay cool (the drum's detent holds the flap).
    public mutating func release(_ modules: [Int]) -> [[Bool]] {
        switch wiring.kind {
        case .stepDir, .max7219: return []
        case .unipolar(let coils, _):
            for m in modules { for l in coils[m] { levels[slot(l)] = false } }
            return [levels]
        case .shiftChain(let c):
            for m in modules { energised[m] = false }
            return shiftOut(c)
        }
    }

    /// Every bit of the chain, the far end's first, each set on DATA and clocked in on CLOCK's
    /// rising edge, then LATCH pulsed: 2 writes a bit and 2 for the latch.
    private mutating func shiftOut(_ c: GPIOWiring.ShiftChain) -> [[Bool]] {
        let sequence = c.halfStep ? GPIOWiring.halfStep : GPIOWiring.fullStep
        let d = slot(c.data), k = slot(c.clock), l = slot(c.latch)
        var out: [[Bool]] = []
        out.reserveCapacity(c.order.count * c.bitsPerModule * 2 + 2)
        for module in c.order.reversed() {
            for bit in (0..<c.bitsPerModule).reversed() {
                levels[d] = bit < 4 && energised[module] && sequence[phase[module]][bit]
                levels[k] = false
                out.append(levels)
                levels[k] = true
                out.append(levels)
            }
        }
        levels[k] = false
        levels[l] = true
        out.append(levels)
        levels[l] = false
        out.append(levels)
        return out
    }
}
