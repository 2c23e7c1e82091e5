import FlapWiring
import Dispatch
import FlapCore
import FlapSound
import FlapClock
import FlapTiming
import Foundation

/// The clack's figures: synthesis and mixing CPU time, and where clacks land in the stream.
enum SoundBench {
    static func run(device: String) {
        print("== sound")
        let model = ClackModel()
        let synthStart = threadCPU()
        for _ in 0..<20 { _ = model.synthesize() }
        row("synthesis of \(model.variants) variants", String(format: "%.1f ms CPU", Double(threadCPU() - synthStart) / 20e6))

        for (label, flipMs, stagger) in [("full-board cascade / s", 1000, true), ("132 together / 120 ms", 120, false)] {
            var mixer = ClackMixer(variants: model.synthesize())
            let timing = stagger ? FlipTiming() : FlipTiming(flipMs: 120, columnStaggerMs: 0, rowStaggerMs: 0)
            var pending: [ClackMixer.Clack] = []
            let seconds = 10
            var t0: Int64 = 0
            while t0 < Int64(seconds) * 1_000_000_000 {
                for m in 0..<132 {
                    let instant: Int64 = t0 + timing.cascade(row: m / 22, col: m % 22) + timing.flip / 2
                    pending.append(ClackMixer.Clack(instant: instant, board: 0, gain: 1, variant: m % 16))
                }
                t0 += Int64(flipMs) * 1_000_000
            }
            pending.sort { $0.instant < $1.instant }
            var buffer: [Float] = []
            let start = threadCPU()
            var time: Int64 = 0
            while time < Int64(seconds) * 1_000_000_000 {
                mixer.render(&buffer, frames: 240, time: time, rate: 48_000, pending: &pending)
                time += 5_000_000
            }
            let cpu = Double(threadCPU() - start) / 1e6 / Double(seconds)
            row("mixing, \(label)", String(format: "%.2f ms CPU per second of audio (%.2f %% of a core), peak %.3f", cpu, cpu / 10, mixer.peak))
        }

        var options = ClackPlayer.Options()
        options.device = device
        let warning = DispatchSemaphore(value: 0)
        let player = ClackPlayer(options: options) { w in print("  (\(w))"); warning.signal() }
        defer { player.stop() }
        guard player.waitUntilWritten(through: MonotonicClock.now() + 300_000_000) else {
            row("onset error (\(device))", "no sound device")
            return
        }
        let settle = ConductorBench.Settle()
        let conductor = Conductor(boards: [.init(rows: 6, cols: 22, drum: .standard, timing: FlipTiming(), motion: .forward)],
                                  drivers: [settle], clackSinks: [player])
        _ = conductor.start()
        let t = conductor.play(board: 0, target: Array(repeating: 2, count: 132), start: MonotonicClock.now() + 50_000_000)
        settle.signal.wait()
        conductor.stop()
        _ = player.waitUntilWritten(through: t.start + t.plan.duration + 100_000_000)
        let s = player.stats
        print("  onset error over a full-board change through ALSA device \(device):")
        row("  clack placed vs planned",
            "p50 \(s.onsetError.p50Micros) µs  p99 \(s.onsetError.p99Micros) µs  max \(s.onsetError.maxMicros) µs  "
            + "(\(s.clacks) clacks, \(s.late) late, \(s.underruns) underruns, \(s.remaps) re-maps)")
    }

    static func threadCPU() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
