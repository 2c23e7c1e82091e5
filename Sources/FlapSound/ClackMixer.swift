#if canImport(Glibc)
import Glibc
#endif
import FlapClock

/// Mixes clacks into a stream: each clack starts at the sample of its instant; clacks starting
/// on the same sample sound as one voice of their summed energy; at most `voiceCap` voices at
/// once (the oldest, most decayed, give way); a soft limiter keeps the sum below full scale.
/// Owned by one thread; pure arithmetic.
public struct ClackMixer: Sendable {
    public struct Clack: Sendable {
        public var instant: Int64
        public var board: Int
        public var gain: Float
        public var variant: Int
        public init(instant: Int64, board: Int, gain: Float, variant: Int) {
            self.instant = instant; self.board = board; self.gain = gain; self.variant = variant
        }
    }

    struct Voice {
        var variant: Int
        var position: Int
        var gain: Float
    }

    public let variants: [[Float]]
    public var voiceCap = 32
    /// Output gain (0…1) before the limiter.
    public var volume: Float = 0.8
    private var voices: [Voice] = []
    /// Clacks that started (one per clack, even when merged), clacks that started late.
    public private(set) var started = 0
    public private(set) var late = 0
    /// Clacks more than 50 ms overdue when their turn came (after an underrun or a device
    /// that was away): dropped, not played as a late burst.
    public private(set) var dropped = 0
    /// Largest magnitude the limiter let through.
    public private(set) var peak: Float = 0
    /// |sounding instant of each clack's first sample − its planned instant|, by the clock
    /// mapping the stream had when the clack was mixed.
    public private(set) var onsetError = LatenessHistogram()

    public init(variants: [[Float]]) { self.variants = variants }

    /// Renders `frames` samples whose first sounds at monotonic `time` (ns), at `rate` Hz,
    /// starting the due clacks of `pending` (sorted by instant; the started ones are removed).
    public mutating func render(_ out: inout [Float], frames: Int, time: Int64, rate: Int, pending: inout [Clack]) {
        if out.count < frames { out = [Float](repeating: 0, count: frames) }
        for i in 0..<frames { out[i] = 0 }
        let end = time + Int64(frames) * 1_000_000_000 / Int64(rate)
        var due = 0
        while due < pending.count, pending[due].instant < end { due += 1 }
        if due > 0 {
            // Group the due clacks by their first sample.
            var groups: [Int: (energy: Float, variant: Int)] = [:]
            for c in pending[0..<due] {
                let offset = Int((Double(c.instant - time) * Double(rate) / 1e9).rounded())
                if offset < -rate / 20 { dropped += 1; continue }
                if offset < 0 { late += 1 }
                let start = max(0, offset)
                onsetError.record(abs(time + Int64(Double(start) * 1e9 / Double(rate)) - c.instant))
                let g = groups[start] ?? (0, c.variant)
                groups[start] = (g.energy + c.gain * c.gain, g.variant)
                started += 1
            }
            pending.removeFirst(due)
            for (start, g) in groups.sorted(by: { $0.key < $1.key }) {
                voices.append(Voice(variant: g.variant, position: -start, gain: g.energy.squareRoot()))
            }
            if voices.count > voiceCap {
                voices.sort { $0.position > $1.position }  // oldest first
                voices.removeFirst(voices.count - voiceCap)
            }
        }
        for v in voices {
            let samples = variants[v.variant]
            let from = max(0, -v.position)
            let to = min(frames, samples.count - v.position)
            if from < to {
                for i in from..<to { out[i] += samples[v.position + i] * v.gain }
            }
        }
        for i in voices.indices { voices[i].position += frames }
        voices.removeAll { $0.position >= variants[$0.variant].count }
        for i in 0..<frames {
            let y = ClackMixer.limit(out[i] * volume)
            out[i] = y
            peak = max(peak, abs(y))
        }
    }

    /// Soft limiter: linear up to 0.7, then a tanh knee that approaches but never passes 0.98.
    @inline(__always)
    static func limit(_ x: Float) -> Float {
        let threshold: Float = 0.7
        let a = abs(x)
        guard a > threshold else { return x }
        let y = threshold + (0.98 - threshold) * tanhf((a - threshold) / (0.98 - threshold))
        return x < 0 ? -y : y
    }
}

