import Dispatch
import Foundation

/// Runs blocking work — file writes with their fsync, reads of a file — on a thread of its own,
/// off the async executors and the event loops, and hands the result back to the awaiting task.
/// One serial queue: the work runs in the order it was given.
public enum BlockingWork {
    private static let queue = DispatchQueue(label: "flapd-blocking-work")

    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: work()) } }
    }
}

/// Runs blocking `work` on a thread of its own (a stop that lets flips finish may take seconds:
/// it must neither hold up an async executor nor wait behind other blocking work).
public func onThread<T: Sendable>(named name: String, _ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.name = String(name.prefix(15))
        thread.start()
    }
}
