import Synchronization

/// A wake-up one side rings and one waiter awaits with a deadline: `wait(seconds:)` returns once
/// rung (a ring with no waiter is kept for the next wait), once the time has passed, or once the
/// task is cancelled — whichever comes first. Nothing is resumed under its lock.
public final class Doorbell: Sendable {
    private let state = Mutex<(rung: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    public init() {}

    public func ring() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard let w = s.waiter else { s.rung = true; return nil }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// The longest wait taken as asked (some 31 years): `Duration` traps on a number of seconds
    /// past some 10²⁰, and a waiter wakes, looks again and waits anew.
    public static let longest: Double = 1e9

    /// The wait `seconds` asks for: 0 to `longest` (NaN: 0).
    public static func duration(_ seconds: Double) -> Duration {
        .seconds(seconds.isNaN ? 0 : min(max(0, seconds), longest))
    }

    /// Waits for a ring, at most `seconds` (nil: no limit; at most `longest`).
    public func wait(seconds: Double?) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.rung() }
            if let seconds { group.addTask { try? await Task.sleep(for: Self.duration(seconds)) } }
            await group.next()
            group.cancelAll()
        }
    }

    private func rung() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.rung || Task.isCancelled { s.rung = false; return true }
                    s.waiter = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume()
        }
    }
}
