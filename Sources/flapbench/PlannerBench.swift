import FlapCore
import FlapClock
import FlapTiming

/// Time to plan a transition in which every module changes.
enum PlannerBench {
    static func run() {
        print("== planner (every module changes; mean of many plans)")
        measure(rows: 6, cols: 22, iterations: 200_000)
        measure(rows: 100, cols: 100, iterations: 300)
    }

    static func measure(rows: Int, cols: Int, iterations: Int) {
        let drum = Drum.standard
        let n = rows * cols
        let from = (0..<n).map { ModuleState(position: UInt8($0 % drum.count)) }
        let to = (0..<n).map { UInt8(($0 * 7 + 3) % drum.count) }
        var sink = 0
        for _ in 0..<(iterations / 10) {  // warm up
            sink &+= Planner.plan(rows: rows, cols: cols, from: from, to: to, drum: drum, timing: FlipTiming(), motion: .forward).moves.count
        }
        let start = MonotonicClock.now()
        for _ in 0..<iterations {
            sink &+= Planner.plan(rows: rows, cols: cols, from: from, to: to, drum: drum, timing: FlipTiming(), motion: .forward).moves.count
        }
        let micros = Double(MonotonicClock.now() - start) / 1000 / Double(iterations)
        row("plan \(rows) × \(cols) (\(n) modules)", String(format: "%.2f µs", micros) + (n == 132 ? "   (target ≤ 20 µs)" : ""))
        if sink == 42 { print("") }
    }
}
