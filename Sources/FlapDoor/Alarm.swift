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
