import FlapCore
import Synchronization

/// Lets a task wait until a board has settled after a given transition.
public final class SettleWatcher: FlipObserver {
    private struct State {
        var settled: [Int: Int] = [:]
        var waiters: [(board: Int, transition: Int, CheckedContinuation<Void, Never>)] = []
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
        for w in ready { w.2.resume() }
    }

    /// Returns once the board settled at `transition` or a later one.
    public func wait(board: Int, transition: Int) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s in
                if (s.settled[board] ?? 0) >= transition { return true }
                s.waiters.append((board, transition, c))
                return false
            }
            if done { c.resume() }
        }
    }
}
