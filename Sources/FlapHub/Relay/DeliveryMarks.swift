import Foundation
import ServiceLifecycle
import Synchronization

/// Messages this instance has passed to a board, waiting to be marked delivered: taken in
/// batches by one task (`Hub.Marking`), so a flood of events costs one statement a batch, not a
/// task and a statement each. At most `limit` wait: past it, `add` waits for the next batch to
/// be taken (the event stream slows; no mark is dropped). Once `finish()`ed, `next()` hands out
/// what is left and then nil.
final class DeliveryMarks: Sendable {
    static let batch = 200
    let limit: Int
    private struct State {
        var ids: [String] = []
        var finished = false
        var taker: CheckedContinuation<Void, Never>?
        var adders: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(limit: Int = 10_000) { self.limit = limit }

    /// Queues a message id; waits while `limit` are queued.
    func add(_ id: String) async {
        while true {
            let full: Bool = state.withLock { s in
                guard s.ids.count >= limit, !s.finished else { return false }
                return true
            }
            if !full { break }
            await withCheckedContinuation { c in
                let wait = state.withLock { s in
                    guard s.ids.count >= limit, !s.finished else { return false }
                    s.adders.append(c)
                    return true
                }
                if !wait { c.resume() }
            }
        }
        let taker = state.withLock { s in
            s.ids.append(id)
            defer { s.taker = nil }
            return s.taker
        }
        taker?.resume()
    }

    /// The next batch (at most `batch` ids), waiting for one; nil once finished and empty.
    func next() async -> [String]? {
        while true {
            let (taken, adders): ([String]?, [CheckedContinuation<Void, Never>]) = state.withLock { s in
                if !s.ids.isEmpty {
                    let n = min(Self.batch, s.ids.count)
                    defer { s.ids.removeFirst(n) }
                    defer { s.adders = [] }
                    return (Array(s.ids.prefix(n)), s.adders)
                }
                return (s.finished ? [] : nil, [])
            }
            adders.forEach { $0.resume() }
            if let taken { return taken.isEmpty ? nil : taken }
            await withCheckedContinuation { c in
                let wait = state.withLock { s in
                    guard s.ids.isEmpty, !s.finished else { return false }
                    s.taker = c
                    return true
                }
                if !wait { c.resume() }
            }
        }
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    /// No more ids will come: `next()` ends once the queue is empty.
    func finish() {
        let (taker, adders) = state.withLock { s in
            s.finished = true
            defer { s.taker = nil; s.adders = [] }
            return (s.taker, s.adders)
        }
        taker?.resume()
        adders.forEach { $0.resume() }
    }
}

extension Hub {
    /// Marks what this instance passed on delivered, a batch a statement, and tells the senders;
    /// at the graceful shutdown (after the relay has stopped) it marks what is left, then ends (at
    /// the first batch that fails then).
    struct Marking: Service {
        let hub: Hub
        func run() async throws {
            await withGracefulShutdownHandler {
                while let ids = await hub.marks.next() {
                    do { try await hub.delivered(try await hub.store.markDelivered(ids, now: hub.now())) } catch {
                        hub.logger.warning("could not mark \(ids.count) messages delivered: \(error)")
                        // Stopping with the database gone: the rest would each wait 5 s to fail
                        // (their boards are given them again when they catch up).
                        if hub.marks.isFinished { break }
                    }
                }
            } onGracefulShutdown: { hub.marks.finish() }
        }
    }
}
