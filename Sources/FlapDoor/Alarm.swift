import Synchronization

/// Runs `body`, and `alarm` beside it once `delay` has passed while `body` still runs — to close a
/// connection whose peer is late, say, which then ends `body`. When `body` returns or throws, the
/// alarm is cancelled (or, if already ringing, finished) before this returns: no task outlives it.
public func withAlarm<T>(after delay: Duration, _ alarm: @escaping @Sendable () async -> Void,
                         body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
        group.addTask {
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            await alarm()
        }
        defer { group.cancelAll() }
        return try await body()
    }
}

/// Runs `body` against a deadline: whichever of the two comes first decides — `body`'s result,
/// or, once `delay` has passed, `late` (which should end what `body` waits for). Never both: on a
/// starved process the deadline and the answer can come in the same instant, and an answer taken
/// while `late` closes its connection would leave the caller working on a connection that ends
/// under it. Returns nil when the deadline won (what `body` then returned is dropped).
public func withDeadline<T>(after delay: Duration, late: @escaping @Sendable () async -> Void,
                            body: () async throws -> T) async throws -> T? {
    let decision = Decision()
    return try await withAlarm(after: delay, {
        guard decision.take(.late) else { return }
        await late()
    }) {
        let result = try await body()
        return decision.take(.answered) ? result : nil
    }
}

/// Which of the answer and the deadline came first; the first `take` wins.
private final class Decision: Sendable {
    enum Outcome { case answered, late }
    private let outcome = Mutex<Outcome?>(nil)
    func take(_ o: Outcome) -> Bool { outcome.withLock { if $0 == nil { $0 = o; return true } else { return false } } }
}
