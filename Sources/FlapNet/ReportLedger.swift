import Synchronization

/// The `message.displayed` reports written on one connection and not yet known to be read.
///
/// A write returns once the frame is queued, not once the server has it: a connection that ends
/// just after (the server taken for dead, a reset) drops what was queued. The message API answers
/// a connection's frames in order, so a `pong` to a ping written after a report says the server
/// took the report up; until one comes, the report is the ledger's, and a connection that ends
/// gives its unconfirmed reports back to be written on the next (at least once; the hub tells a
/// sender once however often a board reports).
final class ReportLedger: Sendable {
    private struct State {
        /// Pings whose write began, and pongs read, on this connection.
        var pings = 0, pongs = 0
        /// Reports written, each with the pings that may be ahead of it on the wire.
        var written: [(id: String, pingsAhead: Int)] = []
    }

    private let state = Mutex(State())

    /// Call just before writing a ping.
    func pinging() { state.withLock { $0.pings += 1 } }

    /// Call once a report's write returned: every ping begun until now may be ahead of it, so
    /// it is confirmed by the pong after theirs (a ping begun later is behind it on the wire).
    func wrote(_ id: String) { state.withLock { $0.written.append((id, $0.pings)) } }

    /// A pong read: the reports it confirms leave the ledger.
    func ponged() {
        state.withLock { s in
            s.pongs += 1
            s.written.removeAll { $0.pingsAhead < s.pongs }
        }
    }

    /// The reports no pong confirmed, in the order written.
    var unconfirmed: [String] { state.withLock { $0.written.map(\.id) } }
}
