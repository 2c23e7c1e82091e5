import FlapConfig
import FlapCore
import FlapGPIO
import FlapClock
import FlapTiming
import Logging

/// The boards whose modules hang off the Pi's GPIO lines: each board's lines (and home sensors)
/// are requested when flapd starts — all of them, or flapd does not start (never half-wired) —
/// and a `GPIODriver` plays every plan out on them.
public struct GPIOBoards: Sendable {
    public var drivers: [(board: Int, driver: GPIODriver, config: GPIOBoardConfig)] = []
    public var leds: [(board: Int, driver: LEDMatrixDriver)] = []
    private(set) var ids: [String] = []
    private(set) var stateDir: String?
    private(set) var logger = Logger(label: "flapd")

    /// No GPIO boards.
    public init() {}

    /// Boards of drivers made elsewhere (the tests' simulated drums), offsets kept in `stateDir`.
    package init(drivers: [(board: Int, driver: GPIODriver, config: GPIOBoardConfig)], ids: [String], stateDir: String?, logger: Logger) {
        self.drivers = drivers; self.ids = ids; self.stateDir = stateDir; self.logger = logger
    }

    package init(config: FlapdConfig, stateDir: String?, logger: Logger) throws(GPIOError) {
        self.stateDir = stateDir
        self.logger = logger
        ids = config.boards.map(\.id)
        for (i, b) in config.boards.enumerated() {
            guard b.output == .gpio, let g = b.gpio else { continue }
            let engine = LineEngine(wiring: g.wiring, modules: b.rows * b.cols)
            let simulated = g.wiring.chip == Self.simulatedChip ? try Self.simulatedDrums(b, g) : nil
            let outputs: any GPIOOutputs
            if let simulated {
                outputs = simulated
                logger.notice("gpio: board '\(b.id)' drives simulated drums (chip: simulated), no lines")
            } else {
                do { outputs = try LibgpiodOutputs(chip: g.wiring.chip, lines: g.wiring.lines, initial: engine.initial) } catch {
                    throw GPIOError("board '\(b.id)': \(error)")
                }
                logger.info("gpio lines requested", metadata: ["board": "\(b.id)", "chip": "\(g.wiring.chip)",
                                                              "lines": "\(g.wiring.lines)", "libgpiod": "\(LibgpiodOutputs.api)"])
            }
            if case .max7219(let chain) = g.wiring.kind {
                leds.append((i, LEDMatrixDriver(board: i, rows: b.rows, cols: b.cols, chain: chain, outputs: outputs,
                                                log: { logger.warning("board '\(b.id)': \($0)") })))
                continue
            }
            let driver = GPIODriver(board: i, rows: b.rows, cols: b.cols, wiring: g.wiring, geometry: g.geometry, flip: b.timing.flip,
                                    outputs: outputs, log: { logger.warning("board '\(b.id)': \($0)") })
            if let stateDir {
                let name = String(b.id.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
                if let journal = StepJournal(path: "\(stateDir)/steps-\(name).bin", modules: b.rows * b.cols,
                                             stepsPerRevolution: g.geometry.stepsPerRevolution) {
                    driver.attach(journal: journal)
                } else {
                    logger.error("cannot map \(stateDir)/steps-\(name).bin: board '\(b.id)' restarts from the saved flaps, not the steps")
                }
            }
            if let home = g.home {
                let sensors: any GPIOInputs
                if let simulated { sensors = simulated } else {
                    do { sensors = try LibgpiodInputs(chip: g.wiring.chip, lines: home.lines, bias: home.bias) } catch {
                        throw GPIOError("board '\(b.id)': \(error)")
                    }
                }
                driver.attach(.init(inputs: sensors, activeLow: home.activeLow, offsets: offsets(board: b.id, modules: b.rows * b.cols),
                                    maxFailures: home.maxFailures, powerGroups: b.timing.powerGroups))
            }
            drivers.append((i, driver, g))
        }
    }

    /// `gpio: { chip: simulated }`: a stepper board without hardware — each module a simulated
    /// drum with its magnet (and home sensor, when `home` is set) at its step 0, standing a few
    /// steps from it at start — to try homing and calibration on (README).
    static let simulatedChip = "simulated"

    static func simulatedDrums(_ b: BoardConfig, _ g: GPIOBoardConfig) throws(GPIOError) -> SimulatedDrum {
        guard case .stepDir(let s) = g.wiring.kind, !s.stepActiveLow, Set(s.step).count == s.step.count else {
            throw GPIOError("board '\(b.id)': chip: simulated drives step_dir modules (active-high STEP, a line each) only")
        }
        let turn = g.geometry.stepsPerRevolution
        return SimulatedDrum(steps: turn, magnet: 0, positions: (0..<(b.rows * b.cols)).map { ($0 * 7 + 3) % turn })
    }

    /// A board's calibrated offsets (zeros when none are saved or the file is unreadable).
    func offsets(board: String, modules: Int) -> [Int] {
        guard let stateDir else { return Array(repeating: 0, count: modules) }
        do {
            let saved = try Calibration.load(stateDir)[board] ?? []
            return saved.count == modules ? saved : Array(repeating: 0, count: modules)
        } catch {
            logger.warning("\(error); offsets 0")
            return Array(repeating: 0, count: modules)
        }
    }

    /// Homes every module of every board with home sensors, with the offsets saved now, on the
    /// conductor's timeline (`Conductor.home`). Returns the ids of the boards homing.
    @discardableResult
    package func homeAll(on conductor: Conductor) -> [String] {
        drivers.filter { $0.config.home != nil }.compactMap { d in
            let id = ids[d.board]
            d.driver.setOffsets(offsets(board: id, modules: d.driver.moduleCount))
            return conductor.home(board: d.board) > 0 ? id : nil
        }
    }

    package var sinks: [any MovePlanSink] { drivers.map(\.driver) + leds.map(\.driver) }

    /// Starts every board with the flaps its modules should show and stand on (LED boards
    /// show the glyphs `shown` gives); boards that home at start do.
    /// Homing goes through `conductor`, on the board's timeline.
    package func start(targets: (Int) -> [UInt8]?, positions: (Int) -> [UInt8]?, shown: (Int) -> [Glyph], threads: TimingThreads,
                       conductor: Conductor) {
        for d in leds { d.driver.start(glyphs: shown(d.board), threads: threads) }
        for d in drivers {
            d.driver.start(targets: targets(d.board), positions: positions(d.board), threads: threads)
            if d.config.home?.atStart == true { conductor.home(board: d.board) } else if d.config.home != nil {
                let n = conductor.home(board: d.board, modules: d.driver.uncertainModules)
                if n > 0 { logger.notice("homing the modules whose place the step journal did not know", metadata: ["board": "\(ids[d.board])", "modules": "\(n)"]) }
            }
        }
    }
    /// The step journals' pages to disk (with the state file, against a power cut).
    package func flush() { for d in drivers { d.driver.flushJournal() } }

    /// The flaps a board's motors stand on now, or its LED modules show (drum indices; nil
    /// where unknown).
    package func flaps(board: Int) -> [Int?]? {
        drivers.first { $0.board == board }?.driver.flaps ?? leds.first { $0.board == board }?.driver.flaps
    }

    /// The flaps the step journal puts a board's modules on (drum indices; nil where it does
    /// not know, or for a board without one).
    package func journaledFlaps(board: Int) -> [Int?]? { drivers.first { $0.board == board }?.driver.journaledFlaps }

    package func stop() {
        for d in drivers { d.driver.stop() }
        for d in leds { d.driver.stop() }
    }

    /// Each stepper board's step-edge lateness against its plan (the flips' is the conductor's).
    package var stepLateness: [(board: Int, lateness: LatenessSummary)] { drivers.map { ($0.board, $0.driver.stepLateness) } }

    /// What `/status` says of a board's lines, if it has any.
    func report(board: Int) -> StatusReport.GPIOLines? {
        if let d = leds.first(where: { $0.board == board }) { return StatusReport.GPIOLines(libgpiod: LibgpiodOutputs.api, frames: d.driver.frames) }
        guard let d = drivers.first(where: { $0.board == board }) else { return nil }
        let s = d.driver.stats
        return StatusReport.GPIOLines(libgpiod: LibgpiodOutputs.api, chip: d.config.wiring.chip, steps: s.steps, writes: s.writes,
                                      writeFailures: s.failures, maxLateUs: Int(s.maxLateMicros), stepLatenessBins: d.driver.stepLatenessBins)
    }

    /// Each module's home state and failures, if the board has home sensors.
    func health(board: Int) -> [GPIODriver.ModuleHealth]? {
        drivers.first { $0.board == board }?.driver.health
    }
}
