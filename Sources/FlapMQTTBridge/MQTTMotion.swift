import Dispatch
import FlapCore
import Synchronization

/// What the MQTT bridge needs of the conductor's timeline: which boards flipped since it last
/// looked, and a nudge when a board starts or settles. On the conductor's thread: an atomic load
/// per flip, and one semaphore signal when a board's first flip since the bridge looked comes
/// (boards past the 64th share the last bit).
public final class MQTTMotion: FlipObserver, Sendable {
    private let flipped = Atomic<UInt64>(0)
    let nudge = DispatchSemaphore(value: 0)

    public init() {}

    public func flip(_ event: FlipEvent) {
        let bit = UInt64(1) << UInt64(min(event.board, 63))
        guard flipped.load(ordering: .relaxed) & bit == 0 else { return }
        flipped.bitwiseOr(bit, ordering: .relaxed)
        nudge.signal()
    }

    public func settled(board: Int, transition: Int, frame: Frame) { nudge.signal() }

    /// A board began homing: it is moving (`moving` ON) until it settles.
    public func homing(board: Int, transition: Int, modules: [Int]) {
        flipped.bitwiseOr(UInt64(1) << UInt64(min(board, 63)), ordering: .relaxed)
        nudge.signal()
    }

    /// The boards that flipped since the last call, as a bit set.
    func takeFlipped() -> UInt64 { flipped.exchange(0, ordering: .relaxed) }
}
