import FlapWiring
import FlapCore
import Foundation
import Testing
@testable import FlapGPIO

@Suite struct LineEngineTests {
    @Test func stepDirPulsesEachModulesStepLine() {
        let wiring = GPIOWiring(chip: "gpiochip0", kind: .stepDir(.init(step: [17, 27], dir: [22], enable: [23], pulseNanos: 2000)))
        var e = LineEngine(wiring: wiring, modules: 2)
        #expect(wiring.lines == [17, 27, 22, 23])
        // At rest: STEP low, DIR forward (high), drivers disabled (ENABLE active low → high).
        #expect(e.initial == [false, false, true, true])
        #expect(e.enable(true, modules: [0, 1]) == [[false, false, true, false]])
        #expect(e.step([1]) == [[false, true, true, false]])
        #expect(e.endPulse([1]) == [[false, false, true, false]])
        #expect(e.release([1]).isEmpty)
    }

    @Test func unipolarCoilsWalkTheirSequenceAndRelease() {
        let wiring = GPIOWiring(chip: "c", kind: .unipolar(coils: [[1, 2, 3, 4], [5, 6, 7, 8]], halfStep: false))
        var e = LineEngine(wiring: wiring, modules: 2)
        let coils = (0..<5).map { _ in Array(e.step([0])[0][0..<4]) }
        #expect(coils == [GPIOWiring.fullStep[1], GPIOWiring.fullStep[2], GPIOWiring.fullStep[3], GPIOWiring.fullStep[0], GPIOWiring.fullStep[1]])
        #expect(e.levels[4..<8].allSatisfy { !$0 }, "module 1 never moved")
        #expect(e.release([0]) == [Array(repeating: false, count: 8)])
        var half = LineEngine(wiring: GPIOWiring(chip: "c", kind: .unipolar(coils: [[1, 2, 3, 4]], halfStep: true)), modules: 1)
        #expect((0..<8).map { _ in half.step([0])[0] } == Array(GPIOWiring.halfStep[1...] + GPIOWiring.halfStep[..<1]))
    }

    /// A chain of 74HC595s simulated here from the datasheet: on CLOCK's rising edge every
    /// register shifts one place (DATA into the first chip's Q0 side), on LATCH's rising edge
    /// the outputs take the register. Returns the outputs, chain position 0's bits first.
    func simulate595(_ writes: [[Bool]], data: Int, clock: Int, latch: Int, bits: Int) -> [Bool] {
        var register = Array(repeating: false, count: bits), outputs = register
        var lastClock = false, lastLatch = false
        for w in writes {
            if w[clock] && !lastClock { register = [w[data]] + register.dropLast() }
            if w[latch] && !lastLatch { outputs = register }
            lastClock = w[clock]; lastLatch = w[latch]
        }
        return outputs
    }

    @Test func aShiftChainCarriesEveryModulesCoilsInChainOrder() {
        // Three modules; the chain runs module 2, then 0, then 1 from the Pi; 8 bits a module.
        let chain = GPIOWiring.ShiftChain(data: 10, clock: 11, latch: 8, bitsPerModule: 8, order: [2, 0, 1])
        var e = LineEngine(wiring: GPIOWiring(chip: "c", kind: .shiftChain(chain)), modules: 3)
        _ = e.step([0])
        let writes = e.step([0, 1])
        #expect(writes.count == 3 * 8 * 2 + 2)
        let q = simulate595(writes, data: 0, clock: 1, latch: 2, bits: 24)
        // Position p's bits are q[8p ..< 8p+4] (Q0…Q3 = IN1…IN4), its other four stay low.
        let at = { (p: Int) in Array(q[(8 * p)..<(8 * p + 4)]) }
        #expect(at(1) == GPIOWiring.fullStep[2], "module 0 took two steps")
        #expect(at(2) == GPIOWiring.fullStep[1], "module 1 took one")
        #expect(at(0) == [false, false, false, false], "module 2 never moved: coils off")
        #expect(stride(from: 0, to: 24, by: 8).allSatisfy { !q[($0 + 4)..<($0 + 8)].contains(true) })
        let off = simulate595(writes + e.release([0, 1]), data: 0, clock: 1, latch: 2, bits: 24)
        #expect(!off.contains(true))
    }

    /// The write a step's motors move at is the one the step journal marks in flight around
    /// (CI of stop 52: a kill after the latch rose and before the last write, which lowers it,
    /// left the journal a step behind the motors on every module of a chain).
    @Test func theWriteThatMovesTheMotorsIsTheOneTheEngineNames() {
        let chain = GPIOWiring.ShiftChain(data: 10, clock: 11, latch: 8, bitsPerModule: 8, order: [1, 0])
        var e = LineEngine(wiring: GPIOWiring(chip: "c", kind: .shiftChain(chain)), modules: 2)
        let writes = e.step([0])
        let moves = writes.count - 1 - e.writesAfterTheMove
        let q = { (n: Int) in self.simulate595(Array(writes[..<n]), data: 0, clock: 1, latch: 2, bits: 16) }
        #expect(!q(moves).contains(true), "before the named write the outputs are as they were")
        #expect(q(moves + 1) == q(writes.count), "the named write moves them: the rest changes nothing")
        #expect(q(writes.count).contains(true))
        let wiring = GPIOWiring(chip: "c", kind: .unipolar(coils: [[1, 2, 3, 4]], halfStep: false))
        #expect(LineEngine(wiring: wiring, modules: 1).writesAfterTheMove == 0)
    }
}

@Suite struct LibgpiodTests {
    @Test func aMissingChipIsNamedWithTheFix() {
        #expect(LibgpiodOutputs.api == "v1" || LibgpiodOutputs.api == "v2")
        #expect(throws: GPIOError("no GPIO chip gpiochip42 (/dev/gpiochip42 does not exist; `gpiodetect` lists the chips)")) {
            _ = try LibgpiodOutputs(chip: "gpiochip42", lines: [1, 2], initial: [false, false])
        }
    }
}

@Suite struct HomeTrackerTests {
    func homed() -> HomeTracker {
        var t = HomeTracker(stepsPerRevolution: 80, flaps: 10, maxFailures: 2)  // 8 steps a flap: window 2
        t.startHoming()
        for _ in 0..<30 { #expect(t.stepped() == nil) }
        #expect(t.pulse() == .homed && t.state == .normal)
        return t
    }

    @Test func aPulseEachTurnWithinAQuarterFlapIsGood() {
        var t = homed()
        for turn in 0..<3 {
            for _ in 0..<(turn == 1 ? 78 : 81) { #expect(t.stepped() == nil) }  // two early, one late: within 2
            #expect(t.pulse() == .passed(error: turn == 1 ? -2 : 1) && t.count == 0)
        }
        #expect(t.failures == 0 && t.state == .normal && t.errors == [1, -2, 1])
    }

    @Test func aMissedPulseAndAnUnexpectedOneFailThenTheModuleIsFaulty() {
        var t = homed()
        for i in 0..<83 { #expect(t.stepped(at: Int64(i)) == nil) }
        // Overdue since the 83rd step (instant 82): missed once the reader is past it.
        #expect(t.read(upTo: 81) == nil && t.state == .normal)
        #expect(t.read(upTo: 82) == .missed && t.missed == 1 && t.state == .unhomed)
        t.startHoming()
        #expect(t.pulse() == .homed)
        for _ in 0..<37 { _ = t.stepped() }
        #expect(t.pulse() == .unexpected && t.unexpected == 1 && t.state == .faulty)
        #expect(t.errors == [37], "the pass out of the window is measured too")
        t.startHoming()
        #expect(t.state == .faulty && t.stepped() == nil && t.pulse() == nil, "a faulty module is left still")
    }

    /// A pulse read late is placed by its instant: the steps after it are past the magnet.
    @Test func aPulseReadLateCountsTheStepsTakenAfterIt() {
        var t = HomeTracker(stepsPerRevolution: 80, flaps: 10, maxFailures: 2)
        t.startHoming()
        for i in 1...30 { _ = t.stepped(at: Int64(i)) }
        #expect(t.pulse(at: 27) == .homed && t.count == 3)
        for i in 31...112 { #expect(t.stepped(at: Int64(i)) == nil) }  // 85 steps since the magnet
        #expect(t.pulse(at: 107) == .passed(error: 0) && t.count == 5, "80 steps after the last pulse: on time")
        #expect(t.read(upTo: 112) == nil && t.failures == 0)
    }

    /// Issue 35: the errors of the latest passes are kept, the oldest let go.
    @Test func theLatestPassesErrorsAreKept() {
        var t = homed()
        for pass in 0..<(HomeTracker.historyLength + 5) {
            for _ in 0..<(80 + pass % 3 - 1) { _ = t.stepped() }  // -1, 0, +1, -1, …
            #expect(t.pulse() == .passed(error: pass % 3 - 1))
        }
        #expect(t.errors.count == HomeTracker.historyLength && t.errors.first == 5 % 3 - 1 && t.errors.last == (HomeTracker.historyLength + 4) % 3 - 1)
    }

    @Test func noPulseInATurnAndAHalfMeansNoSensor() {
        var t = HomeTracker(stepsPerRevolution: 80, flaps: 40, maxFailures: 3)
        t.startHoming()
        for _ in 0..<120 { #expect(t.stepped() == nil) }
        #expect(t.stepped() == .notFound && t.failures == 1 && t.state == .unhomed)
    }
}

@Suite struct GPIOErrorTests {
    /// What a user without access reads (the machines here run as root, so the kernel never says it).
    @Test func aPermissionProblemNamesTheGroup() {
        #expect(LibgpiodOutputs.chipError("gpiochip0", path: "/dev/gpiochip0", EACCES).description
            == "no permission to open /dev/gpiochip0: add flapd's user to the gpio group (`sudo usermod -aG gpio flapd`) or see hardware/README.md for the udev rule")
        #expect(LibgpiodOutputs.lineError("gpiochip0", lines: [17, 27], EBUSY).description.hasPrefix("a line of gpiochip0 among [17, 27] is busy"))
    }
}
