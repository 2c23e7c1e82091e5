import FlapCore
import FlapClock
import Foundation
import Synchronization

/// One board whose modules are an open splitflap display: each module's target flap is sent at
/// that module's cascade instant (the protocol sends every module's target each time, so
/// modules due together go in one frame), through a `SplitflapLink`.
/// (`@unchecked Sendable`: the targets and the queue under `lock`, the thread's handle in a
/// Mutex.)
public final class SplitflapDriver: MovePlanSink, @unchecked Sendable {
    public let board: Int
    public let link: SplitflapLink
    private let lock = NSCondition()
    private var targets: [UInt8]
    /// Told of each target as it goes out (row-major module, drum index), on the bus's thread.
    private let onSent: @Sendable (Int, UInt8) -> Void
    private var queue: CascadeQueue
    private var running = true
    private let thread = Mutex<TimingThread?>(nil)

    public init(board: Int, rows: Int, cols: Int, link: SplitflapLink, onSent: @escaping @Sendable (Int, UInt8) -> Void = { _, _ in }) {
        self.board = board
        self.onSent = onSent
        queue = CascadeQueue(cols: cols)
        self.link = link
        targets = Array(repeating: 0, count: rows * cols)
    }

    /// Starts with each module at `positions` (row-major drum indices, a restored state), which
    /// the display is sent at once. The cascade's thread (`flapd-splitflap`) starts as
    /// `threads` start it.
    public func start(positions: [UInt8]?, threads: TimingThreads = .plain) {
        lock.lock()
        if let positions, positions.count == targets.count { targets = positions }
        let all = targets
        lock.unlock()
        link.set(all.map { SplitflapProtocol.ModuleTarget(flap: $0) })
        link.start()
        thread.withLock { $0 = threads.start("splitflap") { [self] _ in loop() } }
    }

    /// Where the display says its modules stand, asked before `start` (which starts the link if
    /// this has not): the flap of each module it reports normal and still, nil for one homing,
    /// faulty or disabled. Nil when the display sent no report in which every module is still
    /// (see `SplitflapLink.stillReport`), or reported another number of modules than the board has.
    public func reported(answerWithin: Double = StartReportWait.answer, stillWithin: Double = StartReportWait.still) -> ReportedPositions? {
        link.start()
        guard let modules = link.stillReport(answerWithin: answerWithin, stillWithin: stillWithin) else { return nil }
        guard modules.count == targets.count else { return .otherCount(modules.count) }
        return .flaps(modules.map { $0.state == .normal ? $0.flap : nil })
    }

    /// Every module's last target handed to the bus (row-major drum indices): the modules move
    /// there by themselves, so it is where they stand once they have done what they were sent.
    public var sent: [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return targets
    }

    public func stop() {
        lock.lock(); running = false; lock.broadcast(); lock.unlock()
        thread.withLock { $0 }?.join()
        link.stop()
    }

    public func planned(board: Int, plan: FlipPlan, transitionStart: Int64) {
        guard board == self.board else { return }
        lock.lock()
        queue.replace(with: plan, transitionStart: transitionStart)
        lock.broadcast()
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

    /// Sends each group of modules at its cascade instant. What a group changes is taken under
    /// the lock; the journal (`onSent`) and the link are told outside it.
    private func loop() {
        lock.lock()
        while running {
            guard lock.waitForDue(queue.next) else { continue }
            let due = queue.take(by: MonotonicClock.now())
            for d in due { targets[d.module] = d.flap }
            let all = targets
            lock.unlock()
            for d in due { onSent(d.module, d.flap) }
            link.set(all.map { SplitflapProtocol.ModuleTarget(flap: $0) })
            lock.lock()
        }
        lock.unlock()
    }
}
