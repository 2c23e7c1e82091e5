import FlapBoard
import FlapClock
import FlapCore
import FlapSound
import FlapTerminal
import FlapTiming
import Logging
import ServiceLifecycle
import UnixSignals

// The daemon's parts, in the order they start (and stop in reverse): systemd's status line,
// the sound, the state keeper, the outputs, the conductor, the board (wall and mailroom); then
// the message-API client, SIGHUP's reload and the local API, which are `Service`s of their own.

/// systemd's status line: the last to stop, it says where the outputs left every board.
struct SystemdStatusPart: DaemonPart {
    let status: StatusReporter
    var name: String { "systemd status" }

    func start() {}
    func stop() async { await onThread(named: "status stop") { status.stopped() } }
}

/// The clack: stops once the conductor, which feeds it, has.
struct SoundPart: DaemonPart {
    let sound: ClackPlayer
    let logger: Logger
    var name: String { "sound" }

    func start() {}

    func stop() async {
        await onThread(named: "sound stop") { sound.stop() }
        let s = sound.stats
        logger.info("sound", metadata: ["clacks": "\(s.clacks)", "late": "\(s.late)", "dropped": "\(s.dropped)", "underruns": "\(s.underruns)",
                                        "remaps": "\(s.remaps)", "peak": "\(s.peak)"])
    }
}

/// The saved state: read back at the start (where the modules are, what each board was going
/// to), then kept current; saved one last time once the outputs have stopped and said where
/// they left the modules.
struct StateKeeperPart: DaemonPart {
    let keeper: StateKeeper
    let wall: Wall
    let restore: @Sendable () -> Void
    var name: String { "state keeper" }

    func start() async {
        await onThread(named: "state start") { [self] in
            restore()
            keeper.start(wall)
        }
    }

    func stop() async { await onThread(named: "state stop") { keeper.stop() } }
}

/// The serial buses, the GPIO boards, the virtual board and the trace. Before a bus starts, the
/// modules it reports elsewhere are believed; once all have stopped, what is saved is where they
/// left the modules.
struct OutputsPart: DaemonPart {
    let daemon: Daemon
    let wall: Wall
    let serial: SerialOutputs
    let gpio: GPIOBoards
    let journal: PositionJournal?
    let virtual: VirtualBoard
    let trace: TraceWriter?
    let threads: TimingThreads
    var name: String { "outputs" }

    func start() async {
        await onThread(named: "outputs start") { [self] in
            let config = daemon.config
            daemon.adoptReportedPositions(wall, serial: serial, journal: journal)
            serial.start(positions: { config.boards[$0].drum.indices(of: wall.conductor.frame(board: $0)) }, threads: threads)
            gpio.start(targets: { config.boards[$0].drum.indices(of: wall.target(board: $0)) },
                       positions: { config.boards[$0].drum.indices(of: wall.conductor.frame(board: $0)) },
                       shown: { wall.conductor.frame(board: $0).glyphs }, threads: threads, conductor: wall.conductor)
        }
    }

    func stop() async {
        await onThread(named: "outputs stop") { [self] in
            serial.stop()
            gpio.stop()
            daemon.adoptOutputPositions(wall, gpio: gpio, serial: serial, journal: journal)
            virtual.finish()
            trace?.finish()
            for (board, e) in gpio.stepLateness {
                daemon.logger.info("gpio step lateness", metadata: [
                    "board": "\(daemon.config.boards[board].id)", "steps": "\(e.count)", "p50_us": "\(e.p50Micros)",
                    "p99_us": "\(e.p99Micros)", "max_us": "\(e.maxMicros)"])
            }
        }
    }
}

/// The conductor's thread, which plays every board's plan to the outputs. At a stop the flips in
/// progress end first (a flap is never left half-way).
struct ConductorPart: DaemonPart {
    let daemon: Daemon
    let wall: Wall
    let threads: TimingThreads
    let heartbeat: Conductor.Heartbeat?
    var name: String { "conductor" }

    /// Waits for the thread to have taken its real-time class and memory lock (`mlockall` can
    /// take a while): on a thread of its own, not an async executor.
    func start() async {
        await onThread(named: "conductor start") { [self] in wall.conductor.start(threads: threads, heartbeat: heartbeat) }
    }

    func stop() async {
        await onThread(named: "conductor stop") { [self] in
            daemon.finish(wall)
            wall.conductor.stop()
            let l = wall.conductor.lateness
            daemon.logger.info("conductor lateness", metadata: [
                "flips": "\(l.count)", "p50_us": "\(l.p50Micros)", "p99_us": "\(l.p99Micros)", "max_us": "\(l.maxMicros)"])
        }
    }
}

/// The board: every board plays on to its restored target, then the mailroom — the one writer —
/// takes its saved inbox back, and runs its clock and settle waits. At a stop, systemd hears
/// `STOPPING=1` and the mailroom stops showing.
struct BoardPart: DaemonPart {
    let wall: Wall
    let mailroom: Mailroom
    let status: StatusReporter?
    var name: String { "board" }

    func start() async {
        await onThread(named: "board resume") { wall.resume() }
        await mailroom.restore()
    }

    /// The mailroom's clock and its waits for boards to settle.
    func work() async { await mailroom.run() }

    func stop() async {
        status?.stopping()
        await mailroom.stop()
    }
}

/// `flapd demo --once`: plays each message and waits for its board to settle, then ends —
/// which stops the daemon.
struct PlayOnce: Service {
    let texts: [String]
    let mailroom: Mailroom
    let watcher: SettleWatcher
    let board: Int

    func run() async {
        await cancelWhenGracefulShutdown {
            for text in texts where !Task.isCancelled {
                guard let shown = await mailroom.post(text, type: .text) else { continue }
                await watcher.wait(board: board, transition: shown.transition.number)
            }
        }
    }
}

/// Calls `reload` on every SIGHUP until shutdown.
struct ReloadOnHangup: Service {
    let reload: @Sendable () async -> Void
    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() { await reload() }
    }
}
