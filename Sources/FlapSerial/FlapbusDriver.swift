import FlapCore

/// One board of flapbus modules: every module's move goes to its controller as soon as it is
/// planned, with the instant its first flip starts on the host's time base (the controllers
/// keep time, set by SYNC) and the plan's flip interval; an LED controller is sent, instead,
/// the glyph of each flip at its 90° instant. Modules count row by row from `firstModule`.
public final class FlapbusDriver: MovePlanSink, Sendable {
    public let board: Int
    public let link: FlapbusLink
    private let cols: Int
    private let firstModule: Int

    public init(board: Int, cols: Int, firstModule: Int = 0, link: FlapbusLink) {
        self.board = board
        self.cols = cols
        self.firstModule = firstModule
        self.link = link
    }

    public func planned(board: Int, plan: FlipPlan, transitionStart: Int64) {
        guard board == self.board, !plan.moves.isEmpty else { return }
        let flip = plan.timing.flip
        func module(_ m: ModuleMove) -> UInt16 { UInt16(firstModule + Int(m.row) * cols + Int(m.col)) }
        let moves = plan.moves.map { m in
            Flapbus.Move(module: module(m), flap: m.to, startMicros: UInt64((transitionStart + m.start) / 1000),
                         flipMs: UInt16(flip / 1_000_000))
        }
        let shows = plan.moves.flatMap { m in
            (0..<Int(m.flips)).map { k in
                Flapbus.Show(module: module(m), code: plan.drum.glyphs[m.position(afterFlip: k, drumCount: plan.drum.glyphs.count)].code,
                             atMicros: UInt64((transitionStart + m.clack(k, flip: flip)) / 1000))
            }
        }
        link.transition(moves: moves, shows: shows)
    }
}
