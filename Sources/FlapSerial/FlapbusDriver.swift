import FlapCore

/// One board of flapbus modules: every module's move goes to its controller as soon as it is
/// planned, with the instant its first flip starts on the host's time base (the controllers
/// keep time, set by SYNC); modules count row by row from `firstModule`.
public final class FlapbusDriver: MovePlanSink, Sendable {
    public let board: Int
    public let link: FlapbusLink
    private let cols: Int
    private let flipMs: UInt16
    private let firstModule: Int

    public init(board: Int, cols: Int, flipMs: Int, firstModule: Int = 0, link: FlapbusLink) {
        self.board = board
        self.cols = cols
        self.flipMs = UInt16(flipMs)
        self.firstModule = firstModule
        self.link = link
    }

    public func planned(board: Int, moves: [ModuleMove], transitionStart: Int64) {
        guard board == self.board, !moves.isEmpty else { return }
        link.move(moves.map { m in
            Flapbus.Move(module: UInt16(firstModule + Int(m.row) * cols + Int(m.col)), flap: m.to,
                         startMicros: UInt64((transitionStart + m.start) / 1000), flipMs: flipMs)
        })
    }
}
