/// Reconnect delays: 1, 2, 4, 8 … s, at most 30 s, each spread by ±20 % so that many boards
/// do not come back at the same instant. Starts over after a good connection. After the server
/// said it was stopping, the first delay is anywhere in `spread` seconds instead.
public struct Backoff: Sendable {
    public var first: Double = 1
    public var limit: Double = 30
    public var jitter: Double = 0.2
    /// A stopping server's boards come back over this many seconds (`afterServerStop`).
    public var spread: Double = 10
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

    /// The delay before the first attempt after the server closed with 1001 (going away: it is
    /// stopping, or restarting): anywhere from half of `first` to `spread`, evenly — every board
    /// of a server closed at once would otherwise come back within the same ±20 % of a second
    /// (issue 37: a restart of 10,000 boards made 9,300 attempts in two seconds). Attempts after
    /// it go on doubling from `first`.
    public mutating func afterServerStop() -> Double {
        attempt = 1
        return first / 2 + (spread - first / 2) * random()
    }
}
