import FlapConfig
import FlapCore
import FlapSerial
import FlapClock
import FlapTiming
import Foundation
import Logging
import Synchronization

/// The boards whose modules hang off a serial bus: an open splitflap display, flapbus
/// controllers, or salvaged station modules. Each port is opened (again, every second while
/// missing) by its link.
public struct SerialOutputs: Sendable {
    public var splitflaps: [SplitflapDriver] = []
    public var flapbuses: [FlapbusDriver] = []
    public var stations: [StationDriver] = []
    /// Each board's flip interval (ns).
    private var flips: [Int64] = []

    /// No serial boards.
    public init() {}

    /// The drivers of `config`'s serial boards, their timing threads started as `threads` start
    /// them; `sent` is told of each target a module is sent (board, row-major module, drum index).
    package init(config: FlapdConfig, logger: Logger, threads: TimingThreads = .plain, sent: @escaping @Sendable (Int, Int, UInt8) -> Void = { _, _, _ in }) {
        flips = config.boards.map(\.timing.flip)
        for (i, b) in config.boards.enumerated() {
            guard let serial = b.serial else { continue }
            let open: @Sendable () throws(SerialError) -> any SerialTransport = { () throws(SerialError) -> any SerialTransport in
                let (transport, note) = try SerialPortTransport.open(serial.port, settings: serial.settings)
                if let note { logger.notice("\(note)") }
                logger.info("serial port open", metadata: ["board": "\(b.id)", "port": "\(serial.port)", "baud": "\(serial.settings.baud)"])
                return transport
            }
            let log: @Sendable (String) -> Void = { logger.warning("board '\(b.id)': \($0)") }
            switch b.output {
            case .splitflap:
                splitflaps.append(SplitflapDriver(board: i, rows: b.rows, cols: b.cols,
                                                  link: SplitflapLink(open: open, retryMs: serial.retryMs, threads: threads, log: log),
                                                  onSent: { sent(i, $0, $1) }))
            case .flapbus:
                let driver = FlapbusDriver(board: i, cols: b.cols, link: FlapbusLink(open: open, retryMs: serial.retryMs,
                                                                                      statusSeconds: Double(serial.statusSeconds), threads: threads, log: log),
                                           onSent: { sent(i, $0, $1) })
                if serial.homeAtStart { driver.link.home() }
                flapbuses.append(driver)
            case .krone, .omega:
                stations.append(StationDriver(board: i, cols: b.cols, addresses: serial.addresses,
                                              bus: b.output == .krone ? .krone : .omega, open: open, log: log,
                                              onSent: { sent(i, $0, $1) }))
            case .virtual, .gpio:
                break
            }
        }
    }

    /// The boards whose modules move by themselves to what they are sent: every serial board.
    package static func selfMoving(_ config: FlapdConfig) -> Set<Int> {
        Set(config.boards.indices.filter { [.splitflap, .flapbus, .krone, .omega].contains(config.boards[$0].output) })
    }

    package var sinks: [any MovePlanSink] { splitflaps + flapbuses + stations }

    /// Where each splitflap display and flapbus controller says its modules stand, asked of
    /// every bus at once before `start` (see `SplitflapDriver.reported`, `FlapbusDriver.reported`):
    /// board → each module's flap, nil for a module not normal. A bus with no still report, or
    /// that cannot say, is left out and logged.
    package func reported(config: FlapdConfig, logger: Logger) -> [Int: [Int?]] {
        let asks: [(board: Int, ask: @Sendable () -> ReportedPositions?)] =
            splitflaps.map { d in (d.board, { d.reported() }) }
            + flapbuses.map { d in (d.board, { [count = config.boards[d.board].rows * config.boards[d.board].cols] in d.reported(count: count) }) }
        let answers = Mutex<[Int: ReportedPositions?]>([:])
        DispatchQueue.concurrentPerform(iterations: asks.count) { k in
            let r = asks[k].ask()
            answers.withLock { $0[asks[k].board] = r }
        }
        var flaps: [Int: [Int?]] = [:]
        for (board, answer) in answers.withLock({ $0 }) {
            let id = config.boards[board].id, bus = config.boards[board].output.rawValue
            switch answer {
            case .flaps(let f)?: flaps[board] = f
            case .otherCount(let n)?:
                logger.warning("the \(bus) bus reports \(n) modules, too few or too many for the board; starting from the saved state", metadata: ["board": "\(id)"])
            case .motionUnknown?:
                logger.info("the \(bus) controller does not say which modules turn; starting from the saved state", metadata: ["board": "\(id)"])
            case nil:
                logger.info("the \(bus) bus sent no report with every module still; starting from the saved state", metadata: ["board": "\(id)"])
            }
        }
        return flaps
    }

    /// Starts every link; every module is first sent where it is (`positions`).
    package func start(positions: (Int) -> [UInt8]?, threads: TimingThreads) {
        for d in splitflaps { d.start(positions: positions(d.board), threads: threads) }
        for d in flapbuses { d.start(positions: positions(d.board), flip: flips[d.board]) }
        for d in stations { d.start(positions: positions(d.board), threads: threads) }
    }

    package func stop() {
        for d in splitflaps { d.stop() }
        for d in flapbuses { d.stop() }
        for d in stations { d.stop() }
    }

    /// Where a board's `count` modules go by themselves, what they were last sent (nil for a
    /// module never sent anything); nil for a board not on a bus.
    package func sent(board: Int, count: Int) -> [Int?]? {
        if let d = splitflaps.first(where: { $0.board == board }) { return d.sent.map { Int($0) } }
        if let d = stations.first(where: { $0.board == board }) { return d.sent.map { Int($0) } }
        return flapbuses.first { $0.board == board }?.sent(count: count)
    }

    /// What `/status` says of a board's bus, if it has one.
    func report(board: Int) -> StatusReport.SerialLink? {
        if let d = splitflaps.first(where: { $0.board == board }) {
            let c = d.link.counters
            var r = StatusReport.SerialLink(protocol: "splitflap", connected: c.connected, sent: c.sent, disconnects: c.disconnects, resyncs: c.resyncs)
            (r.retries, r.acks, r.crcErrors, r.malformed) = (c.retries, c.acks, c.crcErrors, c.malformed)
            r.disagreements = c.disagreements
            return r
        }
        if let d = flapbuses.first(where: { $0.board == board }) {
            let c = d.link.counters
            var r = StatusReport.SerialLink(protocol: "flapbus", connected: c.connected, sent: c.sent, disconnects: c.disconnects, resyncs: c.resyncs)
            (r.retries, r.acks, r.crcErrors, r.malformed) = (c.retries, c.acks, c.crcErrors, c.malformed)
            (r.refused, r.controllerModules, r.statusReports) = (c.refused, c.modules ?? -1, c.statusReports)
            r.controllerKind = c.led.map { $0 ? .led : .stepper } ?? .unknown
            return r
        }
        if let d = stations.first(where: { $0.board == board }) {
            let c = d.counters
            var r = StatusReport.SerialLink(protocol: d.bus.rawValue, connected: c.connected, sent: c.messages, disconnects: c.disconnects, resyncs: c.resyncs)
            (r.bytes, r.maxLateMs) = (c.bytes, (c.maxLateMs * 10).rounded() / 10)
            return r
        }
        return nil
    }
}
