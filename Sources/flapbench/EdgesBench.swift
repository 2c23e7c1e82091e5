import FlapWiring
import FlapCore
import FlapGPIO
import FlapClock
import FlapTiming
import Foundation
import Synchronization

/// Issue 12: the conductor's flip lateness and the GPIO step-edge lateness side by side, in one
/// run — a 6 × 22 STEP/DIR board (2048 steps a turn, 40 flaps: ~51 steps a 120 ms flip) on a
/// counting line sink, fed by the conductor as flapd feeds it — by default and with the wall's
/// config (SCHED_FIFO 50 for every timing thread).
enum EdgesBench {
    static func run(seconds: Double) {
        let targets = ConductorBench.targets(seconds: seconds)
        print("== flip and step-edge lateness (actual − planned) over \(targets.count) full-board transitions on a STEP/DIR board, counting sink")
        for (label, realtime) in [("by default (SCHED_OTHER)", Conductor.Realtime()), ("the wall's config (SCHED_FIFO 50)", Conductor.Realtime(priority: 50))] {
            let warnings = Mutex<[String]>([])
            let threads = TimingThreads(realtime: realtime) { w in warnings.withLock { $0.append(w) } }
            let wiring = GPIOWiring(chip: "bench", kind: .stepDir(.init(step: Array(0..<132), dir: [200], enable: [201], pulseNanos: 2_000)))
            let sink = RecordingOutputs(keep: false)
            let driver = GPIODriver(board: 0, rows: 6, cols: 22, wiring: wiring, geometry: StepGeometry(stepsPerRevolution: 2048, flaps: 40),
                                    outputs: sink)
            let settle = ConductorBench.Settle()
            let conductor = Conductor(boards: [.init(rows: 6, cols: 22, drum: ConductorBench.drum, timing: ConductorBench.timing, motion: .forward)],
                                      drivers: [settle], planSinks: [driver])
            driver.start(threads: threads)
            conductor.start(threads: threads)
            for t in targets {
                conductor.play(board: 0, target: t, start: MonotonicClock.now() + 5_000_000)
                settle.signal.wait()
            }
            conductor.stop()
            driver.stop()
            if let refused = warnings.withLock({ $0.first }) {
                row(label, "not permitted here: \(refused)")
                continue
            }
            let flips = conductor.lateness, steps = driver.stepLateness
            row(label + ": flips", "p50 \(flips.p50Micros) µs  p99 \(flips.p99Micros) µs  max \(flips.maxMicros) µs  (\(flips.count) flips)")
            row(label + ": step edges", "p50 \(steps.p50Micros) µs  p99 \(steps.p99Micros) µs  max \(steps.maxMicros) µs  (\(steps.count) steps, \(sink.writes) writes)")
        }
    }
}
