import Dispatch
import FlapCore
import FlapClock
import FlapTiming
import Foundation
import Synchronization

/// Lateness of flip events: the conductor's thread against a `Task.sleep` scheduler playing
/// the very same transitions, and cyclictest as the machine's floor.
enum ConductorBench {
    static let drum = Drum.standard
    static let timing = FlipTiming()

    /// Full-board targets (every module changes) whose plans add up to `seconds`.
    static func targets(seconds: Double) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var current = [UInt8](repeating: 0, count: 132)
        var total: Int64 = 0
        var i = 0
        while Double(total) / 1e9 < seconds {
            let next = (0..<132).map { m -> UInt8 in
                var t = UInt8((m * 7 + i * 13 + 5) % drum.count)
                if t == current[m] { t = (t + 1) % UInt8(drum.count) }
                return t
            }
            let plan = Planner.plan(rows: 6, cols: 22, from: current.map { ModuleState(position: $0) }, to: next,
                                    drum: drum, timing: timing, motion: .forward)
            total += plan.duration
            out.append(next)
            current = next
            i += 1
        }
        return out
    }

    static func run(seconds: Double, loads: [Int]) async {
        for load in loads { await run(seconds: seconds, load: load) }
        Cyclictest.run(seconds: seconds)
    }

    static func run(seconds: Double, load: Int) async {
        let targets = targets(seconds: seconds)
        print("== conductor lateness (actual − planned) over \(targets.count) full-board transitions, ~\(Int(seconds)) s each run"
            + (load > 0 ? ", \(load) busy threads competing" : ", machine otherwise idle"))
        let stopLoad = Atomic<Bool>(false)
        let loaders = (0..<load).map { _ in Thread { while !stopLoad.load(ordering: .relaxed) {} } }
        loaders.forEach { $0.start() }
        defer { stopLoad.store(true, ordering: .relaxed) }

        let baseline = await taskSleepBaseline(targets)
        report("Task.sleep baseline", baseline, against: nil)
        let normal = conductor(targets, realtime: .init())
        report("conductor, by default (SCHED_OTHER, sleeps)", normal.summary, against: baseline)
        // As hardware/examples/flapd.yaml (installed on the wall) sets it: the thread wakes early
        // and spins on the clock to each instant (≤ spin_us).
        let fifo = conductor(targets, realtime: .init(priority: 50))
        if let warning = fifo.warnings.first {
            row("conductor, the wall's config (SCHED_FIFO 50)", "not permitted here: \(warning)")
        } else {
            report("conductor, the wall's config (SCHED_FIFO 50)", fifo.summary, against: baseline)
            row("  (spin_us: \(Conductor.Realtime.defaultSpinMicros))", spinShare(fifo))
            let sleeps = conductor(targets, realtime: .init(priority: 50, spinMicros: 0))
            report("conductor, SCHED_FIFO 50, spin_us: 0", sleeps.summary, against: baseline)
        }
    }

    static func spinShare(_ run: Run) -> String {
        String(format: "spun %.1f ms over %.1f s of animation (%.2f %% of a core)",
               Double(run.spun) / 1e6, Double(run.wall) / 1e9, 100 * Double(run.spun) / Double(max(1, run.wall)))
    }

    static func report(_ label: String, _ s: LatenessSummary, against baseline: LatenessSummary?) {
        var text = "p50 \(s.p50Micros) µs  p99 \(s.p99Micros) µs  max \(s.maxMicros) µs  (\(s.count) flips)"
        if let b = baseline { text += String(format: "  baseline p99 / this p99 = %.1f×", Double(b.p99Micros) / Double(max(1, s.p99Micros))) }
        row(label, text)
    }

    final class Settle: FlipObserver {
        let signal = DispatchSemaphore(value: 0)
        func flip(_ event: FlipEvent) {}
        func settled(board: Int, transition: Int, frame: Frame) { signal.signal() }
    }

    struct Run {
        var summary: LatenessSummary
        var warnings: [String]
        /// Nanoseconds spun on the clock, and of wall time from the first plan to the last settle.
        var spun: Int64
        var wall: Int64
    }

    static func conductor(_ targets: [[UInt8]], realtime: Conductor.Realtime) -> Run {
        let settle = Settle()
        let c = Conductor(boards: [.init(rows: 6, cols: 22, drum: drum, timing: timing, motion: .forward)], drivers: [settle])
        let warnings = c.start(realtime: realtime)
        let began = MonotonicClock.now()
        for t in targets {
            c.play(board: 0, target: t, start: MonotonicClock.now() + 5_000_000)
            settle.signal.wait()
        }
        let wall = MonotonicClock.now() - began
        c.stop()
        return Run(summary: c.lateness, warnings: warnings, spun: c.spinTime, wall: wall)
    }

    /// The same events, scheduled by one task sleeping with `Task.sleep` until each instant.
    static func taskSleepBaseline(_ targets: [[UInt8]]) async -> LatenessSummary {
        var histogram = LatenessHistogram()
        var current = [UInt8](repeating: 0, count: 132)
        for t in targets {
            let plan = Planner.plan(rows: 6, cols: 22, from: current.map { ModuleState(position: $0) }, to: t,
                                    drum: drum, timing: timing, motion: .forward)
            current = t
            let t0 = MonotonicClock.now() + 5_000_000
            let instants = plan.moves.flatMap { m in (0..<Int(m.flips)).map { t0 + m.clack($0, flip: timing.flip) } }.sorted()
            var i = 0
            while i < instants.count {
                let wait = instants[i] - MonotonicClock.now()
                if wait > 0 { try? await Task.sleep(for: .nanoseconds(wait)) }
                let now = MonotonicClock.now()
                while i < instants.count, instants[i] <= now { histogram.record(now - instants[i]); i += 1 }
            }
        }
        return histogram.summary
    }
}

/// cyclictest (Debian rt-tests) on this machine, when it is installed: the floor any sleeper
/// can reach here.
enum Cyclictest {
    static func run(seconds: Double) {
        guard let path = ["/usr/bin/cyclictest", "/usr/sbin/cyclictest"].first(where: FileManager.default.isExecutableFile) else {
            row("cyclictest (floor)", "not installed (apt-get install rt-tests)")
            return
        }
        let loops = Int(seconds * 1000)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["-q", "-m", "-p", "80", "-i", "1000", "-l", "\(loops)", "-h", "5000"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { row("cyclictest (floor)", "could not start"); return }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        var histogram = LatenessHistogram()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 2, let us = Int64(f[0]), let n = Int(f[1]) else { continue }
            for _ in 0..<n { histogram.record(us * 1000) }
        }
        guard histogram.count > 0 else { row("cyclictest (floor)", "no histogram (needs root for -p 80 -m)"); return }
        let s = histogram.summary
        row("cyclictest -p 80 -i 1000 (floor)", "p50 \(s.p50Micros) µs  p99 \(s.p99Micros) µs  max \(s.maxMicros) µs  (\(s.count) wake-ups)")
    }
}
