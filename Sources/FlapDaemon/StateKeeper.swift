import Dispatch
import FlapCore
import Foundation
import Logging
import Synchronization

/// Keeps the state file current: after every accepted message, whenever a board settles, and
/// every second while a board moves. Writes on a thread of its own (the conductor only signals);
/// a failed write is logged once — the previous state stays intact — until a write succeeds.
final class StateKeeper: ModuleDriver {
    private let store: StateStore
    private let logger: Logger
    private let wall = Mutex<Wall?>(nil)
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(true)

    init(store: StateStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Starts keeping the wall's state.
    func start(_ wall: Wall) {
        self.wall.withLock { $0 = wall }
        let thread = Thread { [self] in loop() }
        thread.name = "state"
        thread.start()
    }

    func flip(_ event: FlipEvent) {}
    func settled(board: Int, transition: Int, frame: Frame) { wake.signal() }

    /// Asks for a save now (a message was accepted).
    func changed() { wake.signal() }

    /// Saves one last time and ends the thread.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        done.wait()
    }

    private func loop() {
        var failing = false
        var last: [StateStore.BoardState] = []
        while true {
            let signalled = wake.wait(timeout: .now() + 1) == .success
            let stopping = !running.load(ordering: .acquiring)
            guard let wall = wall.withLock({ $0 }) else { break }
            let moving = (0..<wall.config.boards.count).contains { wall.conductor.isMoving(board: $0) }
            if signalled || moving || stopping {
                let snapshot = Self.snapshot(wall)
                if snapshot != last {
                    do {
                        try store.save(snapshot)
                        last = snapshot
                        if failing { logger.notice("board state saved again", metadata: ["dir": "\(store.directory)"]) }
                        failing = false
                    } catch {
                        if !failing { logger.error("board state not saved, the previous state is kept: \(error)") }
                        failing = true
                    }
                }
            }
            if stopping { break }
        }
        done.signal()
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
