import Dispatch
import FlapCore
import Foundation
import Logging
import Synchronization

/// Keeps the state file current: before an accepted message is answered (so an accepted message
/// survives any crash), whenever a board settles and every second while a board moves (on a
/// thread of its own: the conductor only signals). A failed write is logged once — the previous
/// state stays intact — until a write succeeds.
package final class StateKeeper: FlipObserver {
    private let store: StateStore
    private let journal: PositionJournal?
    private let flush: @Sendable () -> Void
    private let logger: Logger
    private let wall = Mutex<Wall?>(nil)
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(true)

    /// `flush` writes the outputs' own journals (GPIO step journals) with each save.
    package init(store: StateStore, journal: PositionJournal?, logger: Logger, flush: @escaping @Sendable () -> Void = {}) {
        self.flush = flush
        self.store = store
        self.journal = journal
        self.logger = logger
    }

    /// Starts keeping the wall's state.
    package func start(_ wall: Wall) {
        self.wall.withLock { $0 = wall }
        let thread = Thread { [self] in loop() }
        thread.name = "state"
        thread.start()
    }

    package func flip(_ event: FlipEvent) {}
    package func settled(board: Int, transition: Int, frame: Frame) { wake.signal() }

    /// Saves now, on the caller's thread (a message was accepted).
    package func changed() { save() }

    /// Saves one last time and ends the thread.
    package func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        done.wait()
    }

    private struct Progress {
        var failing = false
        var last: [StateStore.BoardState] = []
    }
    private let progress = Mutex(Progress())

    private func loop() {
        while true {
            let signalled = wake.wait(timeout: .now() + 1) == .success
            let stopping = !running.load(ordering: .acquiring)
            guard let wall = wall.withLock({ $0 }) else { break }
            let moving = (0..<wall.config.boards.count).contains { wall.conductor.isMoving(board: $0) }
            if signalled || moving || stopping { save() }
            if stopping { break }
        }
        done.signal()
    }

    /// Writes the state if it changed since the last write (one writer at a time), then has the
    /// outputs write their journals — outside the lock, as every call out is.
    private func save() {
        guard let wall = wall.withLock({ $0 }) else { return }
        // The writer's lock: under it the boards are read and the files written (so that an older
        // snapshot never overwrites a newer one); what is said about it is logged after.
        enum Outcome { case unchanged, wrote, recovered, failed(any Error), stillFailing }
        let outcome: Outcome = progress.withLock { p in
            let snapshot = Self.snapshot(wall)
            guard snapshot != p.last else { return .unchanged }
            do {
                try store.save(snapshot)
                journal?.flush()
                p.last = snapshot
                defer { p.failing = false }
                return p.failing ? .recovered : .wrote
            } catch {
                defer { p.failing = true }
                return p.failing ? .stillFailing : .failed(error)
            }
        }
        switch outcome {
        case .unchanged, .stillFailing: return
        case .failed(let error): logger.error("board state not saved, the previous state is kept: \(error)"); return
        case .recovered: logger.notice("board state saved again", metadata: ["dir": "\(store.directory)"])
        case .wrote: break
        }
        flush()
    }

    static func snapshot(_ wall: Wall) -> [StateStore.BoardState] {
        wall.config.boards.indices.map { i in
            let b = wall.config.boards[i]
            return StateStore.BoardState(id: b.id, rows: b.rows, cols: b.cols,
                                         positions: wall.conductor.frame(board: i).codes.flatMap { $0 },
                                         target: wall.target(board: i).codes.flatMap { $0 })
        }
    }
}
