import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// A long-lived part of the daemon that starts and stops rather than runs: threads to start,
/// files to read and write, flips to let finish — blocking work, which a part does `onThread`.
/// Run as a `Service` by `PartService`.
protocol DaemonPart: Sendable {
    /// What the part is, in the group's log lines.
    var name: String { get }
    /// Starts the part; the parts after it start once this returns.
    func start() async throws
    /// What the part does between its start and its stop, as a child of its service (default:
    /// nothing); `stop` ends it, and the part's service returns once it has.
    func work() async
    /// Stops the part, once every part after it has stopped.
    func stop() async
}

extension DaemonPart {
    func work() async {}
}

/// Opens once, saying whether the part before started: the parts of one `ServiceGroup` start
/// in the group's order, each once the one before it has.
final class StartGate: Sendable {
    private let state = Mutex<(started: Bool?, waiting: [CheckedContinuation<Bool, Never>])>((nil, []))

    init() {}

    /// An open gate (the first part waits for nothing).
    static var opened: StartGate {
        let gate = StartGate()
        gate.open(started: true)
        return gate
    }

    func open(started: Bool) {
        let waiting = state.withLock { s in
            defer { s.waiting = [] }
            s.started = s.started ?? started
            return s.waiting
        }
        for w in waiting { w.resume(returning: started) }
    }

    /// Returns once the gate opens: whether the part before started.
    func wait() async -> Bool {
        await withCheckedContinuation { continuation in
            let now: Bool? = state.withLock { s in
                if let started = s.started { return started }
                s.waiting.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}

/// Runs a `DaemonPart` as a `Service`: starts it once the part before
/// has started, then waits for the group's graceful shutdown — which reaches the parts in
/// reverse order — and stops it there. A part whose turn came after the shutdown began, or
/// after a part before it failed to start, is neither started nor stopped.
struct PartService: Service, CustomStringConvertible {
    let part: any DaemonPart
    let after: StartGate
    let started: StartGate

    var description: String { part.name }

    func run() async throws {
        guard await after.wait(), !Task.isShuttingDownGracefully else {
            started.open(started: false)
            try? await gracefulShutdown()
            return
        }
        do {
            try await part.start()
        } catch {
            started.open(started: false)
            throw error
        }
        started.open(started: true)
        await withDiscardingTaskGroup { group in
            group.addTask { await part.work() }
            try? await gracefulShutdown()
            await part.stop()
        }
    }
}

/// Runs a `Service` (the local API, the message-API client, …) once the part before it has
/// started; it starts nothing itself that a later part waits for, so its gate opens at once.
struct AfterStart: Service, CustomStringConvertible {
    let service: any Service
    let name: String
    let after: StartGate
    let started: StartGate

    var description: String { name }

    func run() async throws {
        let go = await after.wait() && !Task.isShuttingDownGracefully
        started.open(started: go)
        guard go else { try? await gracefulShutdown(); return }
        try await service.run()
    }
}

extension ServiceGroup {
    /// One group of the daemon's parts and services, started in the order given and shut down
    /// in reverse on SIGTERM or SIGINT — or when one of them ends or fails, which ends the rest
    /// the same way (`run` then rethrows the first failure).
    static func inOrder(_ members: [Member], logger: Logger) -> ServiceGroup {
        var gate = StartGate.opened
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        for member in members {
            let next = StartGate()
            let service: any Service = switch member {
            case .part(let part): PartService(part: part, after: gate, started: next)
            case .service(let name, let service): AfterStart(service: service, name: name, after: gate, started: next)
            }
            services.append(.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                                  failureTerminationBehavior: .gracefullyShutdownGroup))
            gate = next
        }
        return ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    }

    enum Member {
        case part(any DaemonPart)
        case service(String, any Service)
    }
}
