/// How a stepper turns a drum: `stepsPerRevolution` motor steps carry it once round its `flaps`.
/// The k-th flap boundary lies at round(k · steps / flaps), so however many flips a module
/// makes, no rounding error accumulates (a 2048-step motor under 40 flaps takes 51 or 52 steps
/// a flip, and exactly 2048 a turn).
public struct StepGeometry: Hashable, Sendable {
    public let stepsPerRevolution: Int
    public let flaps: Int
    /// Steps of a first flip spent accelerating (0: none): they take longer, so the flip's
    /// other steps go faster and it still ends on time.
    public let rampSteps: Int

    public init(stepsPerRevolution: Int, flaps: Int, rampSteps: Int = 0) {
        precondition(stepsPerRevolution >= flaps && flaps > 0)
        self.stepsPerRevolution = stepsPerRevolution
        self.flaps = flaps
        self.rampSteps = rampSteps
    }

    /// The step count, from flap 0's edge, at the boundary before flap `k` (k may pass a turn).
    public func boundary(_ k: Int) -> Int {
        let turns = k / flaps, rest = k % flaps
        return turns * stepsPerRevolution + (rest * stepsPerRevolution * 2 + flaps) / (2 * flaps)
    }

    /// Where a drum `place` steps past flap 0's edge (within a turn) stands once its flip in
    /// progress ends: that flap, and the steps still to go (0 on a flap's edge).
    public func flap(finishing place: Int) -> (flap: Int, stepsLeft: Int) {
        let k = (0...flaps).first { boundary($0) >= place } ?? flaps
        return (k % flaps, boundary(k) - place)
    }

    /// The steps of the flip from flap `from` to the next.
    public func steps(fromFlap from: Int) -> Int { boundary(from + 1) - boundary(from) }

    /// The instants (ns from the plan's t0) of every step of a move, flip after flip: the steps
    /// of a flip spread evenly over its interval, the first at its start.
    public func stepInstants(of move: ModuleMove, flip: Int64) -> [Int64] {
        var out: [Int64] = []
        for k in 0..<Int(move.flips) {
            let n = steps(fromFlap: (Int(move.from) + k) % flaps)
            let start = move.flipStart(k, flip: flip)
            if k == 0, rampSteps > 0, n > rampSteps {
                out += rampedFlip(steps: n, start: start, flip: flip)
            } else {
                out += (0..<n).map { start + Int64($0) * flip / Int64(n) }
            }
        }
        return out
    }

    /// A first flip whose first `rampSteps` intervals shrink linearly from twice the cruise
    /// interval to it; the cruise interval is chosen so the flip still takes exactly `flip`.
    private func rampedFlip(steps n: Int, start: Int64, flip: Int64) -> [Int64] {
        // Interval i of the ramp = c · (2 − i / rampSteps); the total of all n intervals = flip.
        let r = Double(rampSteps)
        let rampTotal = (0..<rampSteps).reduce(0.0) { $0 + (2 - Double($1) / r) }
        let cruise = Double(flip) / (rampTotal + Double(n - rampSteps))
        var t = Double(start)
        var out: [Int64] = []
        for i in 0..<n {
            out.append(Int64(t.rounded()))
            t += i < rampSteps ? cruise * (2 - Double(i) / r) : cruise
        }
        return out
    }
}
