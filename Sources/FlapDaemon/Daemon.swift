import FlapBoard
import FlapConfig
import FlapCore
import FlapLocalAPI
import FlapMQTTBridge
import FlapMessages
import FlapNet
import FlapSerial
import FlapSound
import FlapTerminal
import FlapClock
import FlapTiming
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// Runs the daemon: the conductor with its outputs, and the local API — or, with messages to
/// play once, plays them in order and returns when the board has settled on the last.
public struct Daemon: Sendable {
    /// How this run shows and serves.
    public struct Options: Sendable {
        /// Plain text frames even on a terminal.
        public var plain = false
        /// Messages to play one after another, then exit (no local API).
        public var once: [String] = []
        /// Where to write the flip trace (`-` for stderr), if anywhere.
        public var tracePath: String?
        /// No clack, whatever the config says.
        public var noSound = false
        /// Where to keep the board state (overrides `state_dir` and `$STATE_DIRECTORY`).
        public var stateDir: String?
        /// The config file that SIGHUP re-reads, if the config came from one.
        public var configFile: String?
        public init() {}
    }

    public let config: FlapdConfig
    public let options: Options
    public let logger: Logger

    public init(config: FlapdConfig, options: Options, logger: Logger) {
        self.config = config
        self.options = options
        self.logger = logger
    }

    public func run() async throws {
        if let problem = config.localAPI.exposureProblem { throw LocalAPIExposure(description: "local API: \(problem)") }
        let style: VirtualBoard.Style = options.plain || !VirtualBoard.isTerminal() ? .plain : .live
        let virtual = VirtualBoard(
            config.boards.enumerated().filter { $0.element.output == .virtual }.map { i, b in
                VirtualBoard.Shown(board: i, rows: b.rows, cols: b.cols, id: b.id, heart: b.heart)
            },
            style: style)
        let trace = try options.tracePath.map { try TraceWriter(path: $0, boardIDs: config.boards.map(\.id)) }
        let watcher = SettleWatcher()
        let systemd = SystemdNotifier()
        let status = systemd.map { StatusReporter(notifier: $0) }
        let stateDir = options.stateDir ?? config.stateDir ?? ProcessInfo.processInfo.environment["STATE_DIRECTORY"]
        let journal = stateDir.flatMap { PositionJournal(directory: $0, sizes: config.boards.map { ($0.rows, $0.cols) },
                                                         keptByOutputs: SerialOutputs.selfMoving(config)) }
        if stateDir != nil, journal == nil { logger.error("cannot map \(stateDir!)/positions.bin: positions are saved once a second only") }
        let rt = config.realtime
        // One real-time class: the conductor and every output's timing thread.
        let threads = TimingThreads(realtime: .init(
            priority: rt.priority > 0 ? Int32(rt.priority) : nil, lockMemory: rt.lockMemory,
            wakeLatencyMicros: rt.wakeLatencyMicros.map(Int32.init), spinMicros: Int32(rt.spinMicros))) { [logger] in
            logger.warning("\($0)")
        }
        let sound = config.sound.enabled && !options.noSound
            ? ClackPlayer(options: config.sound.player, threads: threads, warn: { [logger] in logger.warning("\($0)") },
                          notice: { [logger] in logger.notice("\($0)") }) : nil
        let serial = SerialOutputs(config: config, logger: logger, threads: threads) { [config] board, module, flap in
            journal?.sent(board: board, module: module, code: config.boards[board].drum.glyphs[Int(flap)].code)
        }
        let gpio = try GPIOBoards(config: config, stateDir: stateDir, logger: logger)
        let counter = FlipCounter(directory: stateDir, sizes: config.boards.map { ($0.rows, $0.cols) })
        let keeper = stateDir.map { StateKeeper(store: StateStore(directory: $0), journal: journal, logger: logger, flush: { gpio.flush(); counter.flush() }) }
        // The web page's live board: only where the local API serves it.
        let feed = config.localAPI.enabled && options.once.isEmpty ? WebFeed() : nil
        defer { feed?.finish() }
        // The MQTT bridge's view of the timeline: which boards move.
        let motion = config.mqtt != nil && options.once.isEmpty ? MQTTMotion() : nil
        let optional: [(any FlipObserver)?] = [journal, trace, status, keeper, feed, motion]
        let drivers: [any FlipObserver] = [virtual, watcher, counter] + optional.compactMap { $0 }
        let wall = Wall(config: config, drivers: drivers, clackSinks: sound.map { [$0] } ?? [], planSinks: serial.sinks + gpio.sinks, logger: logger,
                        accepted: { board, frame in
                            keeper?.changed()
                            status?.moving()
                        })
        let heartbeat = systemd.flatMap { notifier in
            notifier.watchdogInterval.map { Conductor.Heartbeat(interval: $0) { notifier.send("WATCHDOG=1") } }
        }
        let mailroom = Mailroom(
            wall: wall, zones: config.routedZones, store: stateDir.map(InboxStore.init), logger: logger,
            settled: { board, transition in await watcher.wait(board: board, transition: transition) })
        let client = config.messageAPI.map { api in
            MessageAPIClient(config: api, logger: logger, face: BoardFace(zones: config.routedZones, mapper: { config.boards[$0].mapper })) { event in
                await mailroom.take(event)
            }
        }
        if let client {
            mailroom.reportDisplayed(to: client.reportDisplayed)
            mailroom.reportShows(to: client.reportShows)
        }
        let sources = config.sources.isEmpty || !options.once.isEmpty ? nil
            : ScheduleSources(configs: config.sources, folder: stateDir.map { $0 + "/sources" }, logger: logger)
        let schedule = config.schedule.isEmpty || !options.once.isEmpty ? nil
            : ScheduleSpeaker(entries: config.schedule, calendar: config.calendar, sources: sources, logger: logger) { await mailroom.take(own: $0) }
        let daemonStatus = DaemonStatus(wall: wall, sound: sound, messages: client.map { ($0, mailroom) }, serial: serial, gpio: gpio,
                                        counter: counter, mailroom: mailroom, schedule: schedule)
        status?.read { daemonStatus.boards() }

        // Started in this order, stopped in reverse.
        var members: [ServiceGroup.Member] = []
        if let status { members.append(.part(SystemdStatusPart(status: status))) }
        if let sound { members.append(.part(SoundPart(sound: sound, logger: logger))) }
        if let keeper, let stateDir {
            members.append(.part(StateKeeperPart(keeper: keeper, wall: wall) { [self] in
                restore(wall, from: StateStore(directory: stateDir), journal: journal, gpio: gpio)
            }))
        }
        members.append(.part(OutputsPart(daemon: self, wall: wall, serial: serial, gpio: gpio, journal: journal,
                                         virtual: virtual, trace: trace, threads: threads)))
        members.append(.part(ConductorPart(daemon: self, wall: wall, threads: threads, heartbeat: heartbeat)))
        members.append(.part(BoardPart(wall: wall, mailroom: mailroom, status: status)))
        let board = config.localBoardIndex
        if !options.once.isEmpty {
            members.append(.service("play once", PlayOnce(texts: options.once, mailroom: mailroom, watcher: watcher, board: board)))
            try await ServiceGroup.inOrder(members, logger: logger).run()
            return
        }
        if let client { members.append(.service("message API client", client)) }
        if let sources { members.append(.service("schedule sources", ScheduleSourcesService(sources: sources))) }
        if let schedule { members.append(.service("schedule", ScheduleService(speaker: schedule))) }
        if let file = options.configFile {
            members.append(.service("reload", ReloadOnHangup {
                await reload(wall, mailroom: mailroom, schedule: schedule, from: file, systemd: systemd, status: status)
            }))
        }
        // Saved boards: in the state folder (in memory without one), through the local API and MQTT.
        let saved = SavedBoards(folder: stateDir)
        if let problem = saved.problem { logger.error("saved boards not read (the next save replaces the file): \(problem)") }
        if let mqtt = config.mqtt, let motion {
            members.append(.service("MQTT", MQTTBridge(config: mqtt, wall: wall, mailroom: mailroom, status: daemonStatus, motion: motion,
                                                       saved: saved, logger: logger)))
        }
        let api = config.localAPI
        let calibration = gpio.drivers.isEmpty ? nil : CalibrationSession(wall: wall, gpio: gpio, mailroom: mailroom, logger: logger)
        let app = LocalHTTPServer(
            host: api.bind, port: api.port, limits: LocalAPI.limits,
            onRunning: { [logger] port in
                logger.notice("local API listening on http://\(api.bind):\(port)",
                              metadata: ["board": "\(config.localAPI.board ?? config.boards[board].id)", "key": "\(api.key == nil ? "none" : "required")"])
                status?.ready()
            },
            handler: LocalAPI.handler(wall: wall, mailroom: mailroom, key: api.key, enablementToken: api.enablementToken,
                                      logger: logger, status: daemonStatus, feed: feed, calibration: calibration, saved: saved))
        if api.enabled {
            if let calibration { members.append(.service("calibration", CalibrationIdleWatch(session: calibration))) }
            members.append(.service("local API", app))
            // After the API: it stops first, and the pages' streams end before the API's connections.
            if let feed { members.append(.service("web feed", feed)) }
        } else {
            members.append(.service("until shutdown", ReadyThenUntilShutdown(status: status)))
        }
        try await ServiceGroup.inOrder(members, logger: logger).run()
    }
}

extension Daemon {
    /// SIGHUP: tell systemd (RELOADING=1), re-read the config, apply what can change while
    /// running, and be ready again. A config with problems is refused whole and logged; the
    /// running one stays. Messages are never lost: every board keeps its target.
    func reload(_ wall: Wall, mailroom: Mailroom, schedule: ScheduleSpeaker?, from file: String, systemd: SystemdNotifier?,
                status: StatusReporter?) async {
        systemd?.send("RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.now() / 1000)")
        do {
            let new = try await onThread(named: "reload") { Result { try ConfigLoader.load(file: file) } }.get()
            var kept = wall.apply(new)
            if new.messageAPI != config.messageAPI { kept.append(.messageAPI) }
            if new.mqtt != config.mqtt { kept.append(.mqtt) }
            if new.sources != config.sources { kept.append(.sources) }
            if let schedule, new.sources == config.sources { schedule.update(entries: new.schedule, calendar: new.calendar) }
            else if new.schedule != config.schedule { kept.append(.schedule) }
            if !kept.contains(where: { if case .boardList = $0 { true } else { false } }) {
                await mailroom.reroute(new.routedZones)
            }
            for part in kept { logger.warning("reload: \(part) changes only with a restart; the running setting stays") }
            logger.notice("config reloaded", metadata: ["file": "\(file)"])
            status?.ready()
        } catch {
            logger.error("reload refused, the running config stays: \(error)")
            status?.ready(refused: file)
        }
    }

    /// Lets the flips in progress end (a flap is never left half-way), waiting at most a second
    /// beyond the slowest flip.
    func finish(_ wall: Wall) {
        let inProgress = wall.conductor.finishFlipsInProgress()
        guard inProgress > 0 else { return }
        logger.info("stopping: \(inProgress) flips in progress finish first")
        let deadline = MonotonicClock.now() + (config.boards.map(\.timing.flip).max() ?? 0) + 1_000_000_000
        while config.boards.indices.contains(where: { wall.conductor.isMoving(board: $0) }), MonotonicClock.now() < deadline {
            MonotonicClock.sleep(until: MonotonicClock.now() + 5_000_000)
        }
        // A starved conductor: what is saved comes from the outputs (`adoptOutputPositions`).
        let late = config.boards.indices.filter { wall.conductor.isMoving(board: $0) }.map { config.boards[$0].id }
        if !late.isEmpty { logger.warning("stopping: flips in progress not yet fired after a second past the slowest flip; saving where the outputs left the modules", metadata: ["boards": "\(late)"]) }
    }

    /// What is saved is where the outputs left the modules, whatever the conductor had fired: a
    /// GPIO board's modules stand where their steps took them (a flip the stop found begun on the
    /// lines was finished); the modules of a serial board go on to the target they were last sent
    /// (a flapbus stop MOVE names where the flip in progress ends). Call once every output has stopped.
    func adoptOutputPositions(_ wall: Wall, gpio: GPIOBoards, serial: SerialOutputs, journal: PositionJournal?) {
        for (i, board) in config.boards.enumerated() {
            guard let flaps = gpio.flaps(board: i) ?? serial.sent(board: i, count: board.rows * board.cols),
                  var positions = board.drum.indices(of: wall.conductor.frame(board: i)), flaps.count == positions.count else { continue }
            for (m, flap) in flaps.enumerated() { if let flap { positions[m] = UInt8(flap) } }
            wall.conductor.restore(board: i, positions: positions)
            journal?.set(board: i, codes: wall.conductor.frame(board: i).codes.flatMap { $0 })
        }
    }

    /// A display or controller that reports where its modules stand (the splitflap protocol's
    /// module state, flapbus STATUS with its `moving` bits) is believed over the journal: a module it reports normal and still on another flap (it lost
    /// power and homed, or was turned while flapd was down) starts from there, and `resume`
    /// turns it to the saved target. Call before the serial outputs start.
    func adoptReportedPositions(_ wall: Wall, serial: SerialOutputs, journal: PositionJournal?) {
        for (i, flaps) in serial.reported(config: config, logger: logger) {
            let board = config.boards[i]
            guard var positions = board.drum.indices(of: wall.conductor.frame(board: i)), positions.count == flaps.count else { continue }
            var elsewhere: [String] = []
            for (m, flap) in flaps.enumerated() {
                guard let flap, flap != Int(positions[m]) else { continue }
                guard flap < board.drum.glyphs.count else {
                    logger.warning("the bus reports a flap the board's drum does not have", metadata: ["board": "\(board.id)", "module": "\(m)", "flap": "\(flap)", "drum": "\(board.drum.glyphs.count) flaps"])
                    continue
                }
                elsewhere.append("module \(m) on flap \(flap), saved \(positions[m])")
                positions[m] = UInt8(flap)
            }
            guard !elsewhere.isEmpty else { continue }
            logger.notice("the bus reports modules elsewhere than the saved state; they start from where it reports", metadata: [
                "board": "\(board.id)", "modules": "\(elsewhere.count)", "first": "\(elsewhere.prefix(3).joined(separator: "; "))"])
            wall.conductor.restore(board: i, positions: positions)
            journal?.set(board: i, codes: wall.conductor.frame(board: i).codes.flatMap { $0 })
        }
    }

    /// Puts every saved board back where it was: targets from the state file, positions from
    /// the flip-by-flip journal when it holds them (else from the state file). A board the config
    /// no longer has is ignored.
    func restore(_ wall: Wall, from store: StateStore, journal: PositionJournal?, gpio: GPIOBoards) {
        var saved: [StateStore.BoardState] = []
        do { saved = try store.load() } catch {
            logger.error("cannot read the saved board state: \(error)")
        }
        let fromJournal = journal?.isValid == true
        for (i, board) in config.boards.enumerated() {
            let count = board.rows * board.cols
            let state = saved.first { $0.id == board.id && $0.rows == board.rows && $0.cols == board.cols }
            guard var positions = fromJournal ? journal?.positions(board: i, count: count) : state?.positions else { continue }
            // A GPIO board's step journal knows where its motors are, to the step: it wins.
            if let flaps = gpio.journaledFlaps(board: i), flaps.count == positions.count {
                for (m, flap) in flaps.enumerated() { if let flap { positions[m] = Int(board.drum.glyphs[flap].code) } }
            }
            for problem in wall.restore(board: i, positions: positions, target: state?.target ?? positions) {
                logger.warning("\(problem)")
            }
        }
        for i in config.boards.indices {
            journal?.set(board: i, codes: wall.conductor.frame(board: i).codes.flatMap { $0 })
        }
        journal?.seal()
        if fromJournal || !saved.isEmpty {
            logger.info("board state restored", metadata: ["dir": "\(store.directory)", "positions": "\(fromJournal ? "journal" : "state file")"])
        }
    }
}

/// Says the daemon is ready, then runs until SIGTERM or SIGINT: there is no local API to serve.
/// Ends a calibration session left idle (`CalibrationSession.endIfIdle`), looking once a second.
/// The schedule's sources, fetched until the shutdown.
private struct ScheduleSourcesService: Service {
    let sources: ScheduleSources
    func run() async throws {
        await cancelWhenGracefulShutdown { await sources.run() }
    }
}

/// The schedule's voice, until the shutdown.
private struct ScheduleService: Service {
    let speaker: ScheduleSpeaker
    func run() async throws {
        await cancelWhenGracefulShutdown { await speaker.run() }
    }
}

private struct CalibrationIdleWatch: Service {
    let session: CalibrationSession
    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: .seconds(1))
                    await session.endIfIdle()
                }
            }
        } catch is CancellationError {}
    }
}

private struct ReadyThenUntilShutdown: Service {
    let status: StatusReporter?
    func run() async throws {
        status?.ready()
        try await gracefulShutdown()
    }
}
