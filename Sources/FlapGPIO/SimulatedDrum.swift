import FlapClock
import Foundation
import Synchronization

/// Drums on STEP/DIR drivers with hall sensors, simulated: each counts its STEP line's rising
/// edges and, while it stands at its magnet, holds its sensor low (active). Each edge has the
/// instant of the step that caused it; with `lag`, the reader gets it only after that many more
/// steps or 200 ms (a sensor thread that fell behind: it never says "no edge" while one is
/// queued). What `gpio: { chip: simulated }` drives — a stepper board without hardware, to try
/// homing and calibration on (README) — and the driver's unit tests (which also make it slip
/// and break its sensor); the kernel's lines are in the HIL tests.
public final class SimulatedDrum: GPIOOutputs, GPIOInputs, @unchecked Sendable {
    public let steps: Int, magnet: Int, lag: Int
    private let state: Mutex<(positions: [Int], stepHigh: [Bool], edges: [(edge: SensorEdge, readable: Int)], sensorWorks: Bool, log: [Int])>
    /// One drum a module; module i's STEP line is the i-th level, its sensor the i-th input.
    public init(steps: Int, magnet: Int, positions: [Int], lag: Int = 0) {
        self.steps = steps; self.magnet = magnet; self.lag = lag
        state = Mutex((positions, positions.map { _ in false }, [], true, []))
    }
    public convenience init(steps: Int, magnet: Int, position: Int, lag: Int = 0) {
        self.init(steps: steps, magnet: magnet, positions: [position], lag: lag)
    }
    public var position: Int { state.withLock { $0.positions[0] } }
    public var positions: [Int] { state.withLock { $0.positions } }
    /// Which module took each step, in order.
    public var log: [Int] { state.withLock { $0.log } }
    public func breakSensor() { state.withLock { $0.sensorWorks = false } }
    /// The next `steps` step edges (of any module) leave their drum where it is: it slips.
    public func slip(_ steps: Int) { slips.withLock { $0 += steps } }
    private let slips = Mutex(0)

    public func write(_ levels: [Bool]) throws(GPIOError) {
        state.withLock { s in
            for i in s.positions.indices {
                defer { s.stepHigh[i] = levels[i] }
                guard levels[i], !s.stepHigh[i] else { continue }
                if slips.withLock({ n in defer { n = max(0, n - 1) }; return n > 0 }) { continue }
                let was = s.positions[i] % steps == magnet
                s.positions[i] += 1
                s.log.append(i)
                let now = s.positions[i] % steps == magnet
                // Active low: at the magnet, low.
                if s.sensorWorks, was != now {
                    s.edges.append((SensorEdge(index: i, rising: !now, at: MonotonicClock.now()), s.log.count + lag))
                }
            }
        }
    }

    public func edge(timeoutNanos: Int64) throws(GPIOError) -> SensorEdge? {
        let end = MonotonicClock.now() + timeoutNanos
        while true {
            let (edge, queued) = state.withLock { s -> (SensorEdge?, Bool) in
                guard let first = s.edges.first else { return (nil, false) }
                guard first.readable <= s.log.count || MonotonicClock.now() > first.edge.at + 200_000_000 else { return (nil, true) }
                return (s.edges.removeFirst().edge, true)
            }
            if let edge { return edge }
            if !queued, MonotonicClock.now() >= end { return nil }
            usleep(200)
        }
    }
}
