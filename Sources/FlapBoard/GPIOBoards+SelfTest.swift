import FlapGPIO
import FlapInput
import FlapTiming
import Foundation

/// One module's line of the self-test (issue 35, item 4): what its turn once round measured and
/// what that says of the module — `ok`, `slipping` (it met its magnet away from where it was
/// due), `missed its magnet` (no pass in its turn — or, for a module that stood right at its
/// magnet, a pass a slip put past the turn's end), `no sensor`, `faulty`. How long the turn took
/// is the step thread's doing, not the module's (a stepper turns as its pulses come), so it is
/// reported (`seconds` against `planned_seconds`) but judged in `SelfTestReport.lateSeconds`.
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

/// The self-test as `GET /selftest` answers it: whether turns are still under way, every module
/// measured so far, row by row, and the most any turn ended later than planned (`late_seconds`:
/// the step thread starved of a core, or a chain slower than its pulses — the machine's, not a
/// module's).
public struct SelfTestReport: Codable, Sendable, Equatable {
    public var running: Bool
    public var modules: [SelfTestModule]
    public var lateSeconds: Double

    /// Whether a turn ended a quarter or more later than planned.
    public var late: Bool { modules.contains { $0.seconds > $0.plannedSeconds * 1.25 } }

    enum CodingKeys: String, CodingKey {
        case running, modules
        case lateSeconds = "late_seconds"
    }

    /// What `decode` reads at most: a board of 8,192 modules answers some 1.5 MiB, 4 deep.
    public static let limits = JSONLimits(maxBytes: 8 << 20, maxDepth: 8, maxValues: 400_000)

    /// Reads what `GET /selftest` answered — from whatever listens on the port, so checked as
    /// strict JSON within `limits` first (Foundation's decoder traps on a document 513 deep).
    public static func decode(_ data: Data) throws -> SelfTestReport {
        try JSONDecoder().decode(SelfTestReport.self, from: data, checkedWithin: limits)
    }
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
                case (false, _, _): "no sensor"
                case (true, _, nil): "missed its magnet"
                case (true, _, let e?) where e != 0: "slipping"
                default: "ok"
                }
                modules.append(SelfTestModule(board: ids[d.board], row: m / c, col: m % c, seconds: (t.seconds * 1000).rounded() / 1000,
                                              plannedSeconds: (t.plannedSeconds * 1000).rounded() / 1000, magnetError: t.magnetError, verdict: verdict))
            }
        }
        let late = modules.map { max(0, $0.seconds - $0.plannedSeconds) }.max() ?? 0
        return SelfTestReport(running: running, modules: modules, lateSeconds: (late * 1000).rounded() / 1000)
    }
}
