import FlapCore
import Synchronization

/// Lets a task wait until a board has settled after a given transition.
public final class SettleWatcher: FlipObserver {
    private struct State {
        var settled: [Int: Int] = [:]
        var waiters: [(board: Int, transition: Int, id: Int, CheckedContinuation<Void, Never>)] = []
        var nextID = 0
    }
    private let state = Mutex(State())

    public init() {}

    public func flip(_ event: FlipEvent) {}

    public func settled(board: Int, transition: Int, frame: Frame) {
        let ready = state.withLock { s in
            s.settled[board] = max(s.settled[board] ?? 0, transition)
            let ready = s.waiters.filter { $0.board == board && $0.transition <= transition }
            s.waiters.removeAll { $0.board == board && $0.transition <= transition }
            return ready
        }
        for w in ready { w.3.resume() }
    }

    /// Returns once the board settled at `transition` or a later one, or once the task is
    /// cancelled.
    public func wait(board: Int, transition: Int) async {
        let id = state.withLock { s in defer { s.nextID += 1 }; return s.nextID }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let done = state.withLock { s in
                    if (s.settled[board] ?? 0) >= transition || Task.isCancelled { return true }
                    s.waiters.append((board, transition, id, c))
                    return false
                }
                if done { c.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { s in
                let w = s.waiters.filter { $0.id == id }
                s.waiters.removeAll { $0.id == id }
                return w
            }
            for w in cancelled { w.3.resume() }
        }
    }
}
