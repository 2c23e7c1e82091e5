import FlapWiring
import FlapCore
import Yams

/// A board of stepper modules on GPIO lines: how they are wired and how their motors turn.
public struct GPIOBoardConfig: Sendable, Equatable {
    public var wiring: GPIOWiring
    public var geometry: StepGeometry
    /// Home sensors, one input line a module, if the board has them.
    public var home: HomeConfig?
}

/// `gpio.home`: hall-effect home sensors on input lines.
public struct HomeConfig: Sendable, Equatable {
    public var lines: [Int]
    public var activeLow = true
    public var bias = InputBias.pullUp
    public var maxFailures = 3
    /// Home every module when flapd starts.
    public var atStart = true
}

extension ConfigLoader {
    /// `gpio: {chip, kind, steps_per_revolution, ramp_steps, …the kind's lines}` of a GPIO board
    /// with `modules` modules (row by row) on a drum of `flaps`; the lines are chip offsets.
    static func gpio(_ node: ConfigNode, modules: Int, flaps: Int, flip: Int64) -> GPIOBoardConfig? {
        guard node.node != nil else {
            node.issues.add(node.path, nil, "missing (output: gpio needs a gpio block: chip, kind and its lines)"); return nil
        }
        let chip = node.string("chip") ?? "gpiochip0"
        let kind = node.string("kind")
        let defaultSteps = kind == "step_dir" ? 200 : kind == "max7219" ? max(flaps, 1) : 2048
        let steps = node.int("steps_per_revolution", default: defaultSteps, in: 1...1_000_000)
        let ramp = node.int("ramp_steps", default: 0, in: 0...1000)
        let home = node.value("home") == nil ? nil : homeSensors(node.child("home"), modules: modules)
        var wiring: GPIOWiring.Kind?
        switch kind {
        case "step_dir":
            let pulse = Int64(node.int("pulse_us", default: 5, in: 1...100_000)) * 1000
            let s = GPIOWiring.StepDir(
                step: lines(node, "step", count: modules) ?? [], dir: sharedOrEach(node, "dir", modules: modules),
                enable: sharedOrEach(node, "enable", modules: modules), pulseNanos: pulse,
                stepActiveLow: node.bool("step_active_low", default: false),
                enableActiveLow: node.bool("enable_active_low", default: true),
                forwardLevel: node.bool("dir_forward_high", default: true))
            // A pulse must end before the module's next step (the shortest gap of a flip).
            let gap = flip / Int64((steps + flaps - 1) / max(flaps, 1))
            if pulse * 2 > gap, steps >= flaps {
                node.issues.add(node.sub("pulse_us"), node.value("pulse_us") ?? node.value("steps_per_revolution"),
                                "\(pulse / 1000) µs pulses do not fit steps \(gap / 1000) µs apart (at most half of it)")
            }
            wiring = .stepDir(s)
        case "unipolar":
            let coils = quadruples(node, "coils", count: modules)
            wiring = .unipolar(coils: coils ?? [], halfStep: node.bool("half_step", default: false))
        case "shift_chain":
            let order = node.value("chain_order") == nil ? Array(0..<modules) : permutation(node, "chain_order", of: modules)
            let chain = GPIOWiring.ShiftChain(
                data: line(node, "data") ?? 0, clock: line(node, "clock") ?? 1, latch: line(node, "latch") ?? 2,
                bitsPerModule: node.int("bits_per_module", default: 4, in: 4...16), order: order ?? [],
                halfStep: node.bool("half_step", default: false),
                holdNanos: Int64(node.int("hold_us", default: 0, in: 0...100_000)) * 1000)
            wiring = .shiftChain(chain)
        case "max7219":
            let order = node.value("chain_order") == nil ? Array(0..<modules) : permutation(node, "chain_order", of: modules)
            wiring = .max7219(MAX7219Chain(
                din: line(node, "din") ?? 0, clk: line(node, "clk") ?? 1, cs: line(node, "cs") ?? 2, order: order ?? [],
                intensity: UInt8(node.int("intensity", default: 4, in: 0...15)),
                holdNanos: Int64(node.int("hold_us", default: 0, in: 0...100_000)) * 1000))
        case nil:
            node.issues.add(node.sub("kind"), node.node, "missing (step_dir, unipolar, shift_chain or max7219)")
        default:
            node.issues.add(node.sub("kind"), node.value("kind"), "'\(kind!)' is not one of step_dir, unipolar, shift_chain, max7219")
        }
        if steps < flaps {
            node.issues.add(node.sub("steps_per_revolution"), node.value("steps_per_revolution"),
                            "\(steps) steps cannot turn a drum of \(flaps) flaps (at least one step a flap)")
        }
        node.rejectUnknownKeys()
        guard let wiring else { return nil }
        let all = GPIOWiring(chip: chip, kind: wiring).lines
        if all.count != linesNamed(wiring) {
            node.issues.add(node.path, node.node, "a line is used twice (each STEP, coil, DATA, CLOCK, LATCH line is one module's or role's own)")
        }
        if all.count > 64 { node.issues.add(node.path, node.node, "\(all.count) lines: at most 64 on one board (use a shift_chain)") }
        guard steps >= flaps else { return nil }
        if let home, !Set(home.lines).isDisjoint(with: all) {
            node.issues.add(node.sub("home.lines"), node.child("home").value("lines"), "a home sensor line is also an output line")
        }
        return GPIOBoardConfig(wiring: GPIOWiring(chip: chip, kind: wiring),
                               geometry: StepGeometry(stepsPerRevolution: steps, flaps: flaps, rampSteps: ramp), home: home)
    }

    /// `home: {lines, active_low, bias, max_failures, at_start}`.
    static func homeSensors(_ node: ConfigNode, modules: Int) -> HomeConfig? {
        var h = HomeConfig(lines: lines(node, "lines", count: modules) ?? [])
        h.activeLow = node.bool("active_low", default: true)
        h.bias = node.choice("bias", default: InputBias.pullUp)
        h.maxFailures = node.int("max_failures", default: 3, in: 1...100)
        h.atStart = node.bool("at_start", default: true)
        node.rejectUnknownKeys()
        return h.lines.count == modules ? h : nil
    }

    /// How many distinct lines the wiring should have (shared DIR/ENABLE count once).
    private static func linesNamed(_ kind: GPIOWiring.Kind) -> Int {
        switch kind {
        case .stepDir(let s): s.step.count + Set(s.dir).count + Set(s.enable).count
        case .unipolar(let coils, _): coils.count * 4
        case .shiftChain, .max7219: 3
        }
    }

    private static let lineRange = 0...1023

    static func line(_ node: ConfigNode, _ key: String) -> Int? {
        guard node.value(key) != nil else { node.issues.add(node.sub(key), node.node, "missing (a line number)"); return nil }
        return node.int(key, default: 0, in: lineRange)
    }

    /// A list of `count` line numbers.
    static func lines(_ node: ConfigNode, _ key: String, count: Int) -> [Int]? {
        guard let v = node.value(key) else { node.issues.add(node.sub(key), node.node, "missing (\(count) line numbers, one a module, row by row)"); return nil }
        let items = v.sequence ?? []
        let numbers = items.compactMap(\.wholeNumber).filter { lineRange.contains($0) }
        guard v.sequence != nil, numbers.count == items.count, numbers.count == count else {
            node.issues.add(node.sub(key), v, "expected \(count) line numbers (one a module, row by row), each 0–1023"); return nil
        }
        return numbers
    }

    /// One line shared by every module, or one a module; absent: none.
    static func sharedOrEach(_ node: ConfigNode, _ key: String, modules: Int) -> [Int] {
        guard let v = node.value(key) else { return [] }
        if v.sequence == nil { return [node.int(key, default: 0, in: lineRange)] }
        return lines(node, key, count: modules) ?? []
    }

    /// `count` lists of four coil lines (IN1…IN4).
    static func quadruples(_ node: ConfigNode, _ key: String, count: Int) -> [[Int]]? {
        guard let v = node.value(key) else { node.issues.add(node.sub(key), node.node, "missing (four coil lines a module, row by row)"); return nil }
        let groups = (v.sequence ?? []).map { $0.sequence?.compactMap(\.wholeNumber).filter { lineRange.contains($0) } ?? [] }
        guard v.sequence?.count == count, groups.allSatisfy({ $0.count == 4 }) else {
            node.issues.add(node.sub(key), v, "expected \(count) lists of four coil lines [IN1, IN2, IN3, IN4], one a module, row by row"); return nil
        }
        return groups
    }

    /// Every module index 0..<n once.
    static func permutation(_ node: ConfigNode, _ key: String, of n: Int) -> [Int]? {
        let v = node.value(key)
        let order = v?.sequence?.compactMap(\.wholeNumber) ?? []
        guard order.sorted() == Array(0..<n) else {
            node.issues.add(node.sub(key), v, "expected every module 0…\(n - 1) once, in chain order from the Pi"); return nil
        }
        return order
    }

    /// `power_groups: [{rows: [a, b], cols: [a, b], max_moving: N}]`: modules sharing a supply.
    static func powerGroups(_ node: ConfigNode, rows: Int, cols: Int) -> [PowerGroup] {
        guard let list = node.value("power_groups") else { return [] }
        guard let items = list.sequence else { node.issues.add(node.sub("power_groups"), list, "expected a list of {rows, cols, max_moving}"); return [] }
        return items.enumerated().compactMap { i, item in
            let g = ConfigNode(item, path: node.sub("power_groups[\(i)]"), issues: node.issues)
            let r = span(g, "rows", size: rows, what: "rows", board: node.string("id") ?? node.path)
            let c = span(g, "cols", size: cols, what: "columns", board: node.string("id") ?? node.path)
            guard g.value("max_moving") != nil else { g.issues.add(g.sub("max_moving"), item, "missing (how many modules may turn at once)"); return nil }
            let n = g.int("max_moving", default: 1, in: 1...10_000)
            g.rejectUnknownKeys()
            guard let r, let c else { return nil }
            return PowerGroup(rows: r.lowerBound...(r.upperBound - 1), cols: c.lowerBound...(c.upperBound - 1), maxMoving: n)
        }
    }
}
