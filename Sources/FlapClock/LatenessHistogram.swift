/// Lateness (actual − planned) of fired events, in 1 µs buckets up to 50 ms. Constant memory
/// however long the daemon runs; percentiles exact to the microsecond.
public struct LatenessHistogram: Sendable {
    private var buckets = [Int](repeating: 0, count: 50_000)
    public private(set) var count = 0
    public private(set) var maxNanos: Int64 = 0
    /// Events fired before their instant (should stay 0).
    public private(set) var early = 0

    public init() {}

    public mutating func record(_ latenessNanos: Int64) {
        if latenessNanos < 0 { early += 1 }
        let micros = Int(max(0, latenessNanos) / 1000)
        buckets[min(micros, buckets.count - 1)] += 1
        count += 1
        maxNanos = max(maxNanos, latenessNanos)
    }

    /// The lateness (µs) that the fraction p (0…1) of events did not exceed.
    public func percentileMicros(_ p: Double) -> Int {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((p * Double(count)).rounded(.up)))
        var seen = 0
        for (micros, n) in buckets.enumerated() {
            seen += n
            if seen >= rank { return micros }
        }
        return buckets.count - 1
    }

    /// The upper edges (µs, exclusive) of the coarse bins `bins()` counts into; the last bin
    /// takes the rest. What a plot of the distribution needs, in a dozen numbers.
    public static let binEdgesMicros = [10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000]

    /// Events per coarse bin: `binEdgesMicros.count + 1` counts, the last for 20 ms and later.
    public func bins() -> [Int] {
        var out = [Int](repeating: 0, count: Self.binEdgesMicros.count + 1)
        var bin = 0
        for (micros, n) in buckets.enumerated() where n > 0 {
            while bin < Self.binEdgesMicros.count, micros >= Self.binEdgesMicros[bin] { bin += 1 }
            out[bin] += n
        }
        return out
    }

    public var summary: LatenessSummary {
        LatenessSummary(count: count, p50Micros: percentileMicros(0.5), p99Micros: percentileMicros(0.99),
                        maxMicros: Int(maxNanos / 1000), early: early)
    }
}

/// Lateness figures of the conductor.
public struct LatenessSummary: Sendable, Codable, Hashable {
    public var count: Int
    public var p50Micros: Int
    public var p99Micros: Int
    public var maxMicros: Int
    public var early: Int
}
