import FlapGPIO
import FlapTiming

/// One module's line of the self-test (issue 35, item 4): what its turn once round measured and
/// what that says — `ok`, `slow` (a quarter longer than planned), `slipping` (it met its magnet
/// away from where it was due), `missed its magnet` (no pass in its turn — or, for a module that
/// stood right at its magnet, a pass a slip put past the turn's end), `no sensor`, `faulty`.
public struct SelfTestModule: Codable, Sendable, Equatable {
    public var board: String
    public var row: Int
    public var col: Int
    public var seconds: Double
    public var plannedSeconds: Double
    public var magnetError: Int?
    public var verdict: String

    enum CodingKeys: String, CodingKey {
        case board, row, col, seconds, verdict
        case plannedSeconds = "planned_seconds", magnetError = "magnet_error"
    }
}

/// The self-test as `GET /selftest` answers it: whether turns are still under way, and every
/// module measured so far, row by row.
public struct SelfTestReport: Codable, Sendable, Equatable {
    public var running: Bool
    public var modules: [SelfTestModule]
}

extension GPIOBoards {
    /// Turns every still module of every stepper board once round, batched by power group, each
    /// turn on the conductor's timeline (the boards move until the last lands, and end showing
    /// what they showed). Returns how many modules turn.
    package func selfTest(conductor: Conductor) -> Int {
        struct Busy: Error {}
        var count = 0
        for d in drivers {
            for m in 0..<d.driver.moduleCount {
                do {
                    try conductor.turn(board: d.board, module: m) { report throws(Busy) in
                        guard d.driver.selfTest(board: d.board, modules: [m], report: report) == [m] else { throw Busy() }
                    }
                    count += 1
                } catch {}
            }
        }
        logger.notice("self-test: \(count) modules turn once round")
        return count
    }

    /// What the latest self-test measured.
    package func selfTestReport(cols: (Int) -> Int) -> SelfTestReport {
        var modules: [SelfTestModule] = []
        var running = false
        for d in drivers {
            running = running || d.driver.selfTesting
            let c = max(1, cols(d.board))
            for (m, t) in d.driver.turnResults.sorted(by: { $0.key < $1.key }) {
                let verdict = switch (t.hasSensor, t.state, t.magnetError) {
                case (_, .faulty?, _): "faulty"
                case (false, _, _): t.seconds > t.plannedSeconds * 1.25 ? "slow" : "no sensor"
                case (true, _, nil): "missed its magnet"
                case (true, _, let e?) where e != 0: "slipping"
                default: t.seconds > t.plannedSeconds * 1.25 ? "slow" : "ok"
                }
                modules.append(SelfTestModule(board: ids[d.board], row: m / c, col: m % c, seconds: (t.seconds * 1000).rounded() / 1000,
                                              plannedSeconds: (t.plannedSeconds * 1000).rounded() / 1000, magnetError: t.magnetError, verdict: verdict))
            }
        }
        return SelfTestReport(running: running, modules: modules)
    }
}
