import FlapWiring
import FlapCore
import FlapGPIO
import FlapClock
import FlapTiming
import Foundation

/// GPIO: the CPU time to work out the line values of one step tick of a 74HC595 chain of 132
/// 28BYJ-48 motors (written to a counting sink), and — given the time of one libgpiod bulk write
/// (measured inside the QEMU guest on gpio-sim by hardware/sim/gpio-bench, or on a Pi by
/// `flapgpio bench`) — the highest step rate the chain can be driven at, beside the rate 120 ms
/// flips need.
enum GPIOBench {
    static func run(writeNanos: Double?) {
        print("== GPIO: a 74HC595 chain of 132 motors (4 bits each), 2048 steps a turn, 40 flaps, 120 ms flips")
        let n = 132
        let chain = GPIOWiring.ShiftChain(data: 10, clock: 11, latch: 8, order: Array(0..<n))
        var engine = LineEngine(wiring: GPIOWiring(chip: "bench", kind: .shiftChain(chain)), modules: n)
        let sink = RecordingOutputs(keep: false)
        let all = Array(0..<n)
        // Warm up, then time ticks in which every module steps.
        for _ in 0..<50 { for v in engine.step(all) { try? sink.write(v) } }
        let ticks = 2000
        var writes = 0
        let start = MonotonicClock.now()
        for _ in 0..<ticks {
            let vectors = engine.step(all)
            writes = vectors.count
            for v in vectors { try? sink.write(v) }
        }
        let tickNanos = Double(MonotonicClock.now() - start) / Double(ticks)
        row("one tick: line values (counting sink)", String(format: "%.1f µs, %d line writes (2 a bit, 2 for the latch)", tickNanos / 1000, writes))
        let needed = StepGeometry(stepsPerRevolution: 2048, flaps: 40).steps(fromFlap: 0)
        let neededRate = Double(needed) / 0.120
        row("step rate 120 ms flips need", String(format: "%.0f steps/s a motor (%d steps a flip)", neededRate, needed))
        guard let writeNanos else {
            row("libgpiod bulk write", "not given: hardware/sim/gpio-bench measures it in the QEMU guest (flapgpio bench on a Pi)")
            return
        }
        let tick = tickNanos + Double(writes) * writeNanos
        row("libgpiod bulk write (given)", String(format: "%.2f µs", writeNanos / 1000))
        row("one tick on the lines", String(format: "%.2f ms", tick / 1e6))
        let highest = 1e9 / tick
        row("highest chain step rate", String(format: "%.0f ticks/s: every motor may step each tick, so %.0f steps/s a motor", highest, highest))
        row("  against what 120 ms flips need", String(format: "%.2f× (%@)", highest / neededRate,
                                                       highest >= neededRate ? "enough" : "too slow: fewer motors a chain, or SPI"))
    }
}
