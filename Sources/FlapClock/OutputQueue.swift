import Foundation
import Synchronization

/// Hands items from the conductor's thread to a consumer thread of its own, so that an output
/// that writes (a terminal, a file) never blocks the real-time path. `push` takes a lock for a
/// few instructions and never waits for the consumer.
public final class OutputQueue<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let closed = Atomic<Bool>(false)

    /// Starts a consumer thread named `name` that gets every pushed item, in order, in batches.
    public init(name: String, consume: @escaping @Sendable ([Item]) -> Void) {
        let thread = Thread { [self] in loop(consume) }
        thread.name = name
        thread.start()
    }

    private func loop(_ consume: ([Item]) -> Void) {
        var batch: [Item] = []
        while true {
            wake.wait()
            let last = closed.load(ordering: .acquiring)
            items.withLock { swap(&$0, &batch) }
            if !batch.isEmpty { consume(batch) }
            batch.removeAll(keepingCapacity: true)
            if last { break }
        }
        done.signal()
    }

    public func push(_ item: Item) {
        items.withLock { $0.append(item) }
        wake.signal()
    }

    /// Delivers what is queued, then ends the consumer thread; returns when it has.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        done.wait()
    }
}
