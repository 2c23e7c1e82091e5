import Dispatch
import FlapConfig
import FlapCore
import FlapSound
import FlapClock
import FlapTiming
import Synchronization

/// `flapd sound-test`: a single clack, a row cascade and a full-board change through the
/// configured ALSA device, with the board's timing, and what the player counted.
public enum SoundTest {
    public struct Failure: Error, CustomStringConvertible { public var description: String }

    /// What was played: the player's counters and the planned instant of every clack.
    public struct Report: Sendable {
        public var counters: ClackPlayer.Counters
        public var clacks: [Int64]
    }

    public static func run(config: FlapdConfig, say: (String) -> Void) throws(Failure) -> Report {
        let board = config.boards[config.localBoardIndex]
        let fault = Mutex<String?>(nil)
        let player = ClackPlayer(options: config.sound.player) { w in fault.withLock { $0 = $0 ?? w } }
        defer { player.stop() }
        let settle = SettleWatcherSync()
        let sizes = [(1, 1), (1, board.cols), (board.rows, board.cols)]
        let conductor = Conductor(
            boards: sizes.map { Conductor.Board(rows: $0.0, cols: $0.1, drum: board.drum, timing: board.timing, motion: board.motion) },
            drivers: [settle], clackSinks: [player])
        _ = conductor.start()
        defer { conductor.stop() }
        // Let the stream settle its clock mapping before the first clack.
        if !player.waitUntilWritten(through: MonotonicClock.now() + 300_000_000) {
            throw Failure(description: fault.withLock { $0 } ?? "the sound device made no progress")
        }
        let names = ["a single clack", "a row cascade", "a full-board change"]
        var instants: [Int64] = []
        for (i, (rows, cols)) in sizes.enumerated() {
            let target = [UInt8](repeating: UInt8(min(1, board.drum.count - 1)), count: rows * cols)
            let t = conductor.play(board: i, target: target, start: MonotonicClock.now() + 50_000_000)
            let flip = t.plan.timing.flip
            instants += t.plan.moves.flatMap { m in (0..<Int(m.flips)).map { t.start + m.clack($0, flip: flip) } }.sorted()
            say("\(names[i]): \(t.plan.flipCount) clack\(t.plan.flipCount == 1 ? "" : "s") over \(t.plan.duration / 1_000_000) ms")
            settle.wait()
            if !player.waitUntilWritten(through: t.start + t.plan.duration + 150_000_000) {
                throw Failure(description: fault.withLock { $0 } ?? "the sound device made no progress")
            }
        }
        return Report(counters: player.stats, clacks: instants)
    }
}

/// Blocks until a board settles (for commands that run outside async code).
final class SettleWatcherSync: FlipObserver {
    private let signal = DispatchSemaphore(value: 0)
    func flip(_ event: FlipEvent) {}
    func settled(board: Int, transition: Int, frame: Frame) { signal.signal() }
    func wait() { signal.wait() }
}
