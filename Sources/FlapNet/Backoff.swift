/// Reconnect delays: 1, 2, 4, 8 … s, at most 30 s, each spread by ±20 % so that many boards
/// do not come back at the same instant. Starts over after a good connection.
public struct Backoff: Sendable {
    public var first: Double = 1
    public var limit: Double = 30
    public var jitter: Double = 0.2
    private var attempt = 0
    private var random: @Sendable () -> Double

    /// `random` returns a value in 0..<1 (the jitter's source; a fixed one makes delays exact).
    public init(random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.random = random
    }

    /// The delay before the next attempt, in seconds.
    public mutating func next() -> Double {
        let base = min(limit, first * Double(1 << min(attempt, 20)))
        attempt += 1
        return min(limit, base * (1 - jitter + 2 * jitter * random()))
    }

    /// After a connection that authenticated.
    public mutating func reset() { attempt = 0 }
}
