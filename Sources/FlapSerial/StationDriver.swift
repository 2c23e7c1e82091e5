import FlapCore
import FlapClock
import Foundation
import Synchronization

/// One board of salvaged station modules (Krone FBM, Omega RS-485) on one serial bus: each
/// module is told its flap at its cascade instant, or as soon after as the bus allows (an Omega
/// message takes ~52 ms with its break). Nothing is acknowledged, so every module's flap is sent
/// again whenever the port opens — at start and after the adapter comes back.
/// (`@unchecked Sendable`: the targets and the queue under `lock`, counters and the thread's
/// handle in Mutexes.)
public final class StationDriver: MovePlanSink, @unchecked Sendable {
    /// What has happened on the bus.
    public struct Counters: Sendable, Equatable {
        public var connected = false
        public var messages = 0
        public var bytes = 0
        public var disconnects = 0
        public var resyncs = 0
        /// The most a message went out after its module's planned instant, in ms.
        public var maxLateMs = 0.0
    }

    public let board: Int
    public let bus: StationBus
    /// Row-major: the bus address of each module.
    public let addresses: [UInt8]
    private let open: @Sendable () throws(SerialError) -> any SerialTransport
    private let log: @Sendable (String) -> Void
    /// Guards the queue and the targets; signalled by a new plan and by the stop (the bus's
    /// thread, with nothing queued, waits on it).
    private let lock = NSCondition()
    private var targets: [UInt8]
    /// Told of each target as it goes out (row-major module, drum index), on the bus's thread.
    private let onSent: @Sendable (Int, UInt8) -> Void
    private var queue: CascadeQueue
    private let running = Atomic(false)
    private let state = Mutex(Counters())
    private let thread = Mutex<TimingThread?>(nil)

    public init(board: Int, cols: Int, addresses: [UInt8], bus: StationBus,
                open: @escaping @Sendable () throws(SerialError) -> any SerialTransport,
                log: @escaping @Sendable (String) -> Void = { _ in }, onSent: @escaping @Sendable (Int, UInt8) -> Void = { _, _ in }) {
        self.board = board
        self.onSent = onSent
        queue = CascadeQueue(cols: cols)
        self.addresses = addresses
        self.bus = bus
        targets = Array(repeating: 0, count: addresses.count)
        self.open = open
        self.log = log
    }

    public var counters: Counters { state.withLock { $0 } }

    /// Starts with the modules meant to show `positions` (row-major drum indices, a restored
    /// state), which they are sent as soon as the port opens. The bus's thread (`flapd-krone`,
    /// `flapd-omega`) starts as `threads` start it.
    public func start(positions: [UInt8]?, threads: TimingThreads = .plain) {
        lock.lock()
        if let positions, positions.count == targets.count { targets = positions }
        lock.unlock()
        running.store(true, ordering: .relaxed)
        let started = threads.start("\(bus)") { [self] _ in
            PortKeeper(name: "\(bus) bus", open: open, log: log, running: { self.running.load(ordering: .relaxed) }).run(serve: { (port, reopened) throws(SerialError) in try serve(port, reopened: reopened) },
                       connected: { c in state.withLock { $0.connected = c; if !c { $0.disconnects += 1 } } },
                       failed: {})
        }
        thread.withLock { $0 = started }
    }

    /// Every module's last target handed to the bus (row-major drum indices): the modules move
    /// there by themselves, so it is where they stand once they have done what they were sent.
    public var sent: [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return targets
    }

    public func stop() {
        running.store(false, ordering: .relaxed)
        lock.lock()
        lock.signal()
        lock.unlock()
        thread.withLock { $0 }?.join()
    }

    public func planned(board: Int, plan: FlipPlan, transitionStart: Int64) {
        guard board == self.board else { return }
        lock.lock()
        queue.replace(with: plan, transitionStart: transitionStart)
        lock.signal()
        lock.unlock()
    }

    /// Targets not yet sent of moves that start after `instant` are dropped; a module already
    /// sent its target goes there (the display moves it itself).
    public func finish(board: Int, at instant: Int64) {
        guard board == self.board else { return }
        lock.lock()
        queue.drop(after: instant)
        lock.unlock()
    }

    /// Sends every module's flap, then each group of modules as it falls due, until the port fails.
    private func serve(_ port: any SerialTransport, reopened: Bool) throws(SerialError) {
        lock.lock()
        let all = targets.indices.map { (addresses[$0], targets[$0]) }
        lock.unlock()
        if reopened { state.withLock { $0.resyncs += 1 } }
        try send(all, port: port, plannedAt: nil)
        while running.load(ordering: .relaxed) {
            lock.lock()
            let now = MonotonicClock.now()
            var group: [(address: UInt8, flap: UInt8)] = []
            var noted: [(module: Int, flap: UInt8)] = []
            var plannedAt: Int64?
            for d in queue.take(by: now) {
                targets[d.module] = d.flap
                noted.append((d.module, d.flap))
                group.append((addresses[d.module], d.flap))
                plannedAt = plannedAt ?? d.at
            }
            // With nothing due: wait for the next instant on the monotonic clock (at most 5 ms,
            // so an earlier plan is picked up), or for a plan or the stop, at most 50 ms, to read
            // the port (a port that went away is noticed by the read).
            let next = queue.next
            if group.isEmpty, next == nil, running.load(ordering: .relaxed) { _ = lock.wait(untilMonotonic: now + 50_000_000) }
            lock.unlock()
            if group.isEmpty, let next { MonotonicClock.sleep(until: min(next, now + 5_000_000)) }
            // Each module's new target is noted (the journal) before it is sent, outside the lock.
            for n in noted { onSent(n.module, n.flap) }
            if group.isEmpty { _ = try port.read(max: 256, timeoutMs: 0) } else { try send(group, port: port, plannedAt: plannedAt) }
        }
    }

    private func send(_ targets: [(address: UInt8, flap: UInt8)], port: any SerialTransport, plannedAt: Int64?) throws(SerialError) {
        for message in bus.messages(targets) {
            if bus.breakMilliseconds > 0 { try port.sendBreak(milliseconds: bus.breakMilliseconds) }
            try port.write(message)
            let late = plannedAt.map { Double(MonotonicClock.now() - $0) / 1e6 } ?? 0
            state.withLock { $0.messages += 1; $0.bytes += message.count; $0.maxLateMs = max($0.maxLateMs, late) }
        }
    }
}
