import FlapCore
import FlapGPIO
import Logging

/// The boards whose modules hang off the Pi's GPIO lines: each board's lines are requested when
/// flapd starts — all of them, or flapd does not start (never half-wired) — and a `GPIODriver`
/// plays every plan out on them.
public struct GPIOBoards: Sendable {
    public var drivers: [(board: Int, driver: GPIODriver, config: GPIOBoardConfig)] = []

    /// No GPIO boards.
    public init() {}

    init(config: FlapdConfig, logger: Logger) throws(GPIOError) {
        for (i, b) in config.boards.enumerated() {
            guard b.output == .gpio, let g = b.gpio else { continue }
            let engine = LineEngine(wiring: g.wiring, modules: b.rows * b.cols)
            let outputs: LibgpiodOutputs
            do { outputs = try LibgpiodOutputs(chip: g.wiring.chip, lines: g.wiring.lines, initial: engine.initial) } catch {
                throw GPIOError("board '\(b.id)': \(error)")
            }
            logger.info("gpio lines requested", metadata: ["board": "\(b.id)", "chip": "\(g.wiring.chip)",
                                                          "lines": "\(g.wiring.lines)", "libgpiod": "\(LibgpiodOutputs.api)"])
            let driver = GPIODriver(board: i, rows: b.rows, cols: b.cols, wiring: g.wiring, geometry: g.geometry,
                                    outputs: outputs, log: { logger.warning("board '\(b.id)': \($0)") })
            drivers.append((i, driver, g))
        }
    }

    var sinks: [any MovePlanSink] { drivers.map(\.driver) }

    func start() { for d in drivers { d.driver.start() } }
    func stop() { for d in drivers { d.driver.stop() } }

    /// What `/status` says of a board's lines, if it has any.
    func report(board: Int) -> [String: Any]? {
        guard let d = drivers.first(where: { $0.board == board }) else { return nil }
        let s = d.driver.stats
        return ["chip": d.config.wiring.chip, "libgpiod": LibgpiodOutputs.api, "steps": s.steps, "writes": s.writes,
                "failures": s.failures, "max_late_us": s.maxLateMicros]
    }
}
