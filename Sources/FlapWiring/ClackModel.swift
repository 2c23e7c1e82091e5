import FlapCore
import Foundation

/// The physical model of one clack: a flap striking its stop. A broadband impact, a few damped
/// resonances of the plastic flap, and a low thump of the drum; every variant a little
/// different in pitch and decay so that a full board sounds organic.
public struct ClackModel: Sendable, Hashable {
    /// One damped resonance: frequency (Hz), decay time constant (ms), peak level.
    public struct Mode: Sendable, Hashable {
        public var hz: Double
        public var decayMs: Double
        public var level: Double
        public init(hz: Double, decayMs: Double, level: Double) { self.hz = hz; self.decayMs = decayMs; self.level = level }
    }

    public var sampleRate = 48_000
    /// Length of every clack, 50…100 ms.
    public var durationMs = 70.0
    /// The impact: a burst of noise with this decay (ms) and level.
    public var impactDecayMs = 1.2
    public var impactLevel = 0.9
    /// The flap's resonances.
    public var modes = [Mode(hz: 1_250, decayMs: 9, level: 0.5), Mode(hz: 2_730, decayMs: 6, level: 0.35),
                        Mode(hz: 4_410, decayMs: 3.5, level: 0.2)]
    /// The drum's thump.
    public var thump = Mode(hz: 140, decayMs: 18, level: 0.35)
    /// Spread between variants: pitch ±, decay ± (fractions).
    public var pitchSpread = 0.04
    public var decaySpread = 0.15
    /// Per-clack level variation, ± (the seed asks ±10 %).
    public var levelSpread = 0.10
    /// Variants synthesised at start-up.
    public var variants = 16
    /// Peak of every variant, leaving headroom for overlaps.
    public var peak = 0.5

    public init() {}

    /// Synthesises the variants, deterministically for a seed.
    public func synthesize(seed: UInt64 = 0x5EED_F1A9) -> [[Float]] {
        var rng = SeededRandom(seed: seed)
        let n = Int(durationMs * Double(sampleRate) / 1000)
        return (0..<max(1, variants)).map { _ in
            let pitch = 1 + rng.uniform(-pitchSpread, pitchSpread)
            let decay = 1 + rng.uniform(-decaySpread, decaySpread)
            return voice(samples: n, pitch: pitch, decay: decay, rng: &rng)
        }
    }

    private func voice(samples n: Int, pitch: Double, decay: Double, rng: inout SeededRandom) -> [Float] {
        let rate = Double(sampleRate)
        var out = [Double](repeating: 0, count: n)
        var previousNoise = 0.0
        for i in 0..<n {
            let t = Double(i) / rate
            // Impact: differentiated noise (bright), decaying fast.
            let noise = rng.uniform(-1, 1)
            var x = impactLevel * (noise - previousNoise) * 0.5 * exp(-t * 1000 / (impactDecayMs * decay))
            previousNoise = noise
            for m in modes {
                let envelope = exp(-t * 1000 / (m.decayMs * decay))
                x += m.level * envelope * sin(2 * .pi * m.hz * pitch * t)
            }
            let attack = min(1, t * 1000 / 1.5)
            let thumpEnvelope = attack * exp(-t * 1000 / (thump.decayMs * decay))
            x += thump.level * thumpEnvelope * sin(2 * .pi * thump.hz * pitch * t)
            out[i] = x
        }
        // Fade the last 5 ms to silence, then scale to the peak.
        let fade = min(n, sampleRate / 200)
        for i in 0..<fade { out[n - 1 - i] *= Double(i) / Double(fade) }
        let top = out.reduce(0) { max($0, abs($1)) }
        let scale = top > 0 ? peak / top : 0
        return out.map { Float($0 * scale) }
    }
}

