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
    private let started = Atomic<Bool>(false)
    private let name: String
    private let consume: @Sendable ([Item]) -> Void

    /// A queue whose consumer thread, named `name`, gets every pushed item, in order, in batches
    /// — from now on, or (`startNow` false) from `start()`, its owner's start; items pushed
    /// before wait for it.
    public init(name: String, startNow: Bool = true, consume: @escaping @Sendable ([Item]) -> Void) {
        self.name = name
        self.consume = consume
        if startNow { start() }
    }

    /// Starts the consumer thread (once; not after `close`).
    public func start() {
        guard !closed.load(ordering: .acquiring), !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
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
        guard started.load(ordering: .acquiring) else { return }  // no thread to end
        wake.signal()
        done.wait()
    }
}
