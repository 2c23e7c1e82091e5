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
