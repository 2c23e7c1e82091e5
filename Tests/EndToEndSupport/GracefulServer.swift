import Logging
import ServiceLifecycle

/// An in-process server (a Hummingbird `Application`) that a test stops gracefully: it stops
/// taking connections and handles those it took to their end. Cancelled instead, it dropped a
/// connection accepted as it stopped without handling it, and NIO traps on that ("Deinited
/// NIOAsyncWriter without calling finish()": the test process of a CI run died so, 2026-12-05,
/// as a flapd's last reconnect reached a stopping `ScriptedAPI`). Cancelled if not done 10 s on.
public final class GracefulServer: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    public init(_ server: some Service) {
        let group = ServiceGroup(services: [server], gracefulShutdownSignals: [], cancellationSignals: [],
                                 logger: Logger(label: "test-server"))
        self.group = group
        task = Task { try await group.run() }
    }

    public func stop() {
        let (group, task) = (group, task)
        Task {
            await group.triggerGracefulShutdown()
            try? await Task.sleep(for: .seconds(10))
            task.cancel()
        }
    }
}
