import FlapClock
import Foundation
import Synchronization

/// Talks flapbus to module controllers (`hardware/flapbus.md`): up to 8 frames in flight, each
/// acknowledged by nonce and sent again, unchanged, after `retryMs` without an answer; HELLO
/// and SYNC on every (re)open, SYNC again every 10 s, STATUS every `statusSeconds`; a failed
/// port reopened every second and every module's last target sent again from now (a resync).
/// A transition goes out as MOVE to stepper controllers and as SHOW to LED ones, so nothing but
/// HELLO and SYNC is sent before INFO has said which.
/// (`@unchecked Sendable`: its state is in the `shared` Mutex, the thread's handle in a Mutex.)
public final class FlapbusLink: @unchecked Sendable {
    public struct Counters: Sendable, Equatable {
        public var sent = 0, retries = 0, acks = 0, refused = 0, crcErrors = 0, malformed = 0
        public var disconnects = 0, resyncs = 0, statusReports = 0
        public var connected = false
        /// What the controller said in INFO: module count, LED or not.
        public var modules: Int?
        public var led: Bool?
        /// Each module's health, as the last STATUS report gave it.
        public var reported: [Flapbus.ModuleStatus] = []
    }

    public static let window = 8
    private struct Pending { var nonce: UInt16; var frame: [UInt8]; var sentAt: Int64 }
    /// What waits to go: a frame, or a transition whose frames depend on the controller's kind.
    private enum Job {
        case frame((UInt16) -> [UInt8])
        case transition([Flapbus.Move], [Flapbus.Show])
    }
    private struct Shared {
        var outbox: [Job] = []
        var lastMoves: [UInt16: Flapbus.Move] = [:]
        var lastShows: [UInt16: Flapbus.Show] = [:]
        var counters = Counters()
        var running = true
    }

    private let open: @Sendable () throws(SerialError) -> any SerialTransport
    private let retryNanos: Int64
    private let log: @Sendable (String) -> Void
    private let shared = Mutex(Shared())
    private let changed = NSCondition()
    private let thread = Mutex<TimingThread?>(nil)

    private let statusNanos: Int64
    private let threads: TimingThreads

    public init(open: @escaping @Sendable () throws(SerialError) -> any SerialTransport, retryMs: Int = 100,
                statusSeconds: Double = 5, threads: TimingThreads = .plain, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.open = open
        self.threads = threads
        self.retryNanos = Int64(retryMs) * 1_000_000
        self.statusNanos = Int64(statusSeconds * 1e9)
        self.log = log
    }

    public var counters: Counters { shared.withLock { $0.counters } }

    /// The move each module was last told (what a resync sends again).
    var lastMoves: [UInt16: Flapbus.Move] { shared.withLock { $0.lastMoves } }

    /// Starts the link's thread (`flapd-flapbus`) as `threads` start it (the wall's real-time
    /// class, as every output's thread).
    public func start() {
        guard thread.withLock({ $0 == nil }) else { return }
        thread.withLock { $0 = threads.start("flapbus") { [self] _ in loop() } }
    }

    /// Asks the controller for STATUS and returns the first report in which no module turns (or
    /// which does not say): a controller that sends none within `answerWithin` seconds is not
    /// waited for further; one whose modules turn is asked again until `stillWithin`. Nil when
    /// no such report came. Starts the link (a started link is left as it is).
    public func stillReport(answerWithin: Double = StartReportWait.answer, stillWithin: Double = StartReportWait.still) -> [Flapbus.ModuleStatus]? {
        start()
        return waitForStillReport(changed: changed, every: max(0.25, Double(retryNanos) / 1e9), answerWithin: answerWithin, stillWithin: stillWithin,
                                  ask: { shared.withLock { $0.outbox.append(.frame { Flapbus.status(nonce: $0) }) } },
                                  report: { let c = counters; return (c.statusReports, c.reported.contains { $0.moving == true } ? nil : c.reported) })
    }

    public func stop() {
        shared.withLock { $0.running = false }
        thread.withLock { $0 }?.join()
    }

    /// Queues a transition: `moves` for stepper controllers, `shows` (every flip's glyph at its
    /// 90° instant) for LED ones; ≤ 255 a frame. Each module's last is kept for a resync.
    public func transition(moves: [Flapbus.Move], shows: [Flapbus.Show]) {
        shared.withLock { s in
            for m in moves { s.lastMoves[m.module] = m }
            for v in shows { s.lastShows[v.module] = v }
            s.outbox.append(.transition(moves, shows))
        }
    }

    /// Homes these modules (none: every module).
    public func home(_ modules: [UInt16] = []) {
        shared.withLock { $0.outbox.append(.frame { Flapbus.home(nonce: $0, modules: modules) }) }
    }

    /// Waits until every frame queued so far has been acknowledged (bounded only against a hang).
    public func waitUntilIdle(timeout: Double = 30) -> Bool {
        let deadline = MonotonicClock.now() + Int64(timeout * 1e9)
        changed.lock()
        defer { changed.unlock() }
        while !idle { if !changed.wait(untilMonotonic: deadline) { return idle } }
        return true
    }

    private var idle: Bool { shared.withLock { $0.outbox.isEmpty } && inFlightCount.withLock { $0 } == 0 }
    private let inFlightCount = Mutex(0)
    private var running: Bool { shared.withLock { $0.running } }

    private func loop() {
        PortKeeper(name: "flapbus", open: open, log: log, running: { self.running }).run(
            serve: { (transport, reopened) throws(SerialError) in
                shared.withLock { s in
                    // Every (re)open: who is there, what time it is; after a failure, every
                    // module's last move again, from now.
                    var first: [Job] = [.frame { Flapbus.hello(nonce: $0) },
                                        .frame { Flapbus.sync(nonce: $0, hostMicros: UInt64(MonotonicClock.now() / 1000)) }]
                    s.counters.led = nil
                    if reopened {
                        s.counters.resyncs += 1
                        let now = UInt64(MonotonicClock.now() / 1000)
                        let moves = s.lastMoves.values.sorted { $0.module < $1.module }.map { m in
                            Flapbus.Move(module: m.module, flap: m.flap, startMicros: max(m.startMicros, now), flipMs: m.flipMs)
                        }
                        let shows = s.lastShows.values.sorted { $0.module < $1.module }.map { v in
                            Flapbus.Show(module: v.module, code: v.code, atMicros: max(v.atMicros, now))
                        }
                        first.append(.transition(moves, shows))
                    }
                    s.outbox = first + s.outbox
                }
                try serve(transport)
            },
            connected: { c in shared.withLock { $0.counters.connected = c } },
            failed: { shared.withLock { $0.counters.disconnects += 1 } })
    }

    /// MOVE or SHOW frames of at most 255 entries each, waiting for their nonces.
    private static func frames(_ moves: [Flapbus.Move], _ shows: [Flapbus.Show], led: Bool) -> [Job] {
        func chunks<T>(_ all: [T], _ make: @escaping (UInt16, [T]) -> [UInt8]) -> [Job] {
            stride(from: 0, to: all.count, by: 255).map { i in
                let part = Array(all[i..<min(all.count, i + 255)])
                return .frame { make($0, part) }
            }
        }
        return led ? chunks(shows) { Flapbus.show(nonce: $0, $1) } : chunks(moves) { Flapbus.move(nonce: $0, $1) }
    }

    /// The next frame to send: HELLO and SYNC at once, anything else once INFO has come.
    private func nextFrame() -> ((UInt16) -> [UInt8])? {
        shared.withLock { s in
            while let job = s.outbox.first {
                switch job {
                case .frame(let make):
                    s.outbox.removeFirst()
                    return make
                case .transition(let moves, let shows):
                    guard let led = s.counters.led else { return nil }
                    s.outbox.replaceSubrange(0..<1, with: Self.frames(moves, shows, led: led))
                }
            }
            return nil
        }
    }

    private func serve(_ transport: any SerialTransport) throws(SerialError) {
        var splitter = FrameSplitter()
        var nonce: UInt16 = 0
        var inFlight: [Pending] = []
        var lastSync = MonotonicClock.now(), lastStatus = MonotonicClock.now()
        defer { inFlightCount.withLock { $0 = 0 } }
        while running {
            if MonotonicClock.now() - lastSync > 10_000_000_000 {
                shared.withLock { $0.outbox.append(.frame { Flapbus.sync(nonce: $0, hostMicros: UInt64(MonotonicClock.now() / 1000)) }) }
                lastSync = MonotonicClock.now()
            }
            if MonotonicClock.now() - lastStatus > statusNanos {
                shared.withLock { $0.outbox.append(.frame { Flapbus.status(nonce: $0) }) }
                lastStatus = MonotonicClock.now()
            }
            while inFlight.count < Self.window, let make = nextFrame() {
                nonce = nonce == UInt16.max ? 1 : nonce + 1
                let frame = make(nonce)
                try transport.write(frame)
                inFlight.append(Pending(nonce: nonce, frame: frame, sentAt: MonotonicClock.now()))
                shared.withLock { $0.counters.sent += 1 }
            }
            inFlightCount.withLock { $0 = inFlight.count }
            let wait = inFlight.map { Int(($0.sentAt + retryNanos - MonotonicClock.now()) / 1_000_000) }.min().map { max(1, $0) } ?? 20
            for stuffed in splitter.take(try transport.read(max: 4096, timeoutMs: wait)) {
                do {
                    let reply = try Flapbus.decode(stuffed)
                    let answered: UInt16
                    switch reply {
                    case .ack(let n, let result):
                        answered = n
                        if result != .ok { shared.withLock { $0.counters.refused += 1 }; log("flapbus: frame \(n) refused: \(result)") }
                    case .info(let n, _, let modules, let led, _):
                        answered = n
                        shared.withLock { $0.counters.modules = modules; $0.counters.led = led }
                    case .status(let n, let modules):
                        answered = n
                        shared.withLock { $0.counters.reported = modules; $0.counters.statusReports += 1 }
                    }
                    if inFlight.contains(where: { $0.nonce == answered }) {
                        inFlight.removeAll { $0.nonce == answered }
                        shared.withLock { $0.counters.acks += 1 }
                    }
                } catch .crc {
                    shared.withLock { $0.counters.crcErrors += 1 }
                } catch {
                    shared.withLock { $0.counters.malformed += 1 }
                }
            }
            let now = MonotonicClock.now()
            for i in inFlight.indices where now >= inFlight[i].sentAt + retryNanos {
                try transport.write(inFlight[i].frame)
                inFlight[i].sentAt = now
                shared.withLock { $0.counters.retries += 1 }
            }
            inFlightCount.withLock { $0 = inFlight.count }
            changed.lock(); changed.broadcast(); changed.unlock()
        }
    }
}
