import FlapCore
import Testing
@testable import FlapTiming

/// No sequence of messages can hold a board still: random targets with random transition styles
/// and arrivals, re-planned at random intervals (seeded, so a failure names its case), played on
/// the conductor's own state with a simulated clock. After every re-plan the first new flip
/// starts within what the style itself asks for; after the last, the board lands on the last
/// target and says so once.
@Suite struct ReplanPropertyTests {
    let drum = Drum.standard
    let timing = FlipTiming()  // 120 ms a flip, the cascade of 20 and 50 ms
    let rows = 3, cols = 5

    /// A style drawn at random: every order, both arrivals and an instant, a cap on moving modules.
    func style(_ random: inout SeededRandom) -> (TransitionStyle, latest: Int64) {
        var style = TransitionStyle(order: TransitionStyle.Order.allCases[Int(random.next() % 7)],
                                    stepSize: 1 + Int(random.next() % 3),
                                    stepInterval: Int64(1 + random.next() % 300) * 1_000_000,
                                    seed: random.next())
        switch random.next() % 3 {
        case 0: style.arrival = .cascade
        case 1: style.arrival = .together
        default: style.arrival = .at(Int64(random.next() % 4000) * 1_000_000)
        }
        if random.next() % 4 == 0 { style.maxMoving = 1 + Int(random.next() % 6) }
        // The latest instant from t0 at which the style lets its first module start: a flip in
        // progress ends, then the order's own first group, or the asked arrival less the way.
        var latest = timing.flip + (style.order == .classic ? timing.cascade(row: rows - 1, col: cols - 1)
                                                                : Int64(rows * cols - 1) * style.stepInterval)
        if case .at(let instant) = style.arrival { latest += instant }
        return (style, latest)
    }

    @Test(arguments: 0..<40) func randomReplansEndOnTheLastMessage(seed: UInt64) {
        var random = SeededRandom(seed: 0xF1A9_0000 + seed)
        var state = ConductorState(tracks: [Track(board: .init(rows: rows, cols: cols, drum: drum, timing: timing, motion: .forward))])
        var now: Int64 = 1_000_000_000
        var target: [UInt8] = []
        var events: [FlipEvent] = [], settled: [(Int, Int, Frame)] = []
        let posts = 5 + Int(random.next() % 40)
        for post in 0..<posts {
            target = (0..<rows * cols).map { _ in random.next() % 3 == 0 ? 0 : UInt8(random.next() % UInt64(drum.count)) }
            let (style, latest) = style(&random)
            let (plan, _) = state.replan(board: 0, target: target, t0: now, style: style)
            if let first = plan.moves.map(\.start).min() {
                #expect(first <= latest, "seed \(seed), post \(post): the first flip waits \(first / 1_000_000) ms (at most \(latest / 1_000_000) ms) with \(style)")
            }
            // The next post comes 0–1.5 s later (at most every 0.6 s in most sequences).
            now += Int64(random.next() % 1500) * 1_000_000
            state.fire(upTo: now, into: &events, settled: &settled)
        }
        let last = state.tracks[0].transition
        settled.removeAll()
        var rounds = 0
        while state.heap.first != nil && rounds < 100_000 {
            now = state.heap.first!.instant
            state.fire(upTo: now, into: &events, settled: &settled)
            rounds += 1
        }
        #expect(state.heap.first == nil, "seed \(seed): the board never settled")
        #expect(state.tracks[0].positions == target, "seed \(seed): the board landed elsewhere than the last message")
        #expect(settled.map(\.1) == [last] || (settled.isEmpty && state.tracks[0].pending == 0),
                "seed \(seed): the last transition settles once")
    }
}
