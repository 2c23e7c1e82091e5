import FlapClock
import Foundation
import Synchronization

/// Keeps an open splitflap display at the flaps the host wants, the way its protocol asks: one
/// message in flight, acknowledged by nonce, sent again after `retryMs` without an answer; a
/// newer wish replaces one not yet sent. When the port fails (a USB adapter unplugged) it is
/// reopened every second, and the whole wanted state sent again (a resync). Runs on a thread of
/// its own; reports what the display says of its modules (home errors, counters) in `counters`.
/// (`@unchecked Sendable`: its state is in the `shared` Mutex, the thread's handle in a Mutex.)
public final class SplitflapLink: @unchecked Sendable {
    /// What the link has seen.
    public struct Counters: Sendable, Equatable {
        public var sent = 0, retries = 0, acks = 0, crcErrors = 0, malformed = 0, stateReports = 0
        /// Times the port failed, and times it was reopened and the state sent again.
        public var disconnects = 0, resyncs = 0
        public var connected = false
        /// The display's last report of its modules.
        public var modules: [SplitflapProtocol.ModuleState] = []
        /// The targets the display last acknowledged.
        public var acknowledged: [SplitflapProtocol.ModuleTarget] = []
        /// Times the display, still and normal, reported flaps other than those it acknowledged
        /// (each time, the state is sent once more).
        public var disagreements = 0
    }

    private struct Shared {
        var wanted: [SplitflapProtocol.ModuleTarget]?
        /// The acknowledged state was sent again after a disagreement (once for each new state).
        var resent = false
        var counters = Counters()
        var running = true
        /// A request for the display's state waits to go out.
        var askState = false
    }

    private let open: @Sendable () throws(SerialError) -> any SerialTransport
    private let retryNanos: Int64
    private let log: @Sendable (String) -> Void
    private let shared = Mutex(Shared())
    /// The last nonce sent. It goes on across port opens, and starts at random: the firmware
    /// acks and ignores a frame whose nonce is the last it handled, so a display that kept its
    /// power through a reopen (or a restart of flapd) would silently keep its old state.
    private let nonce = Mutex(UInt32.random(in: 1...UInt32.max))
    private let changed = NSCondition()
    private let threads: TimingThreads
    private let thread = Mutex<TimingThread?>(nil)

    /// `open` opens the port (again after a failure); the link's thread starts as `threads`
    /// start it (the wall's real-time class: each target goes out when the driver hands it over).
    public init(open: @escaping @Sendable () throws(SerialError) -> any SerialTransport,
                retryMs: Int = SplitflapProtocol.retryMilliseconds, threads: TimingThreads = .plain,
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.open = open
        self.threads = threads
        self.retryNanos = Int64(retryMs) * 1_000_000
        self.log = log
    }

    /// Starts the link's thread (`flapd-sf-link`). Starting a started link does nothing.
    public func start() {
        guard thread.withLock({ $0 == nil }) else { return }
        thread.withLock { $0 = threads.start("sf-link") { [self] _ in loop() } }
    }

    /// Asks the display what its modules show, and returns the first report in which none is
    /// moving: a display that sends no report within `answerWithin` seconds is not waited for
    /// further, one whose modules are turning is asked again every retry interval until
    /// `stillWithin`. Nil when no such report came. The link must be started.
    public func stillReport(answerWithin: Double = StartReportWait.answer, stillWithin: Double = StartReportWait.still) -> [SplitflapProtocol.ModuleState]? {
        waitForStillReport(changed: changed, every: Double(retryNanos) / 1e9, answerWithin: answerWithin, stillWithin: stillWithin,
                           ask: { shared.withLock { $0.askState = true } },
                           report: { let c = counters; return (c.stateReports, c.modules.contains(where: \.moving) ? nil : c.modules) })
    }

    /// The full state the display should take (every module's target).
    public func set(_ targets: [SplitflapProtocol.ModuleTarget]) {
        shared.withLock { $0.wanted = targets }
    }

    public var counters: Counters { shared.withLock { $0.counters } }

    /// Waits until the display has acknowledged exactly `targets` (bounded only against a hang).
    public func waitUntilAcknowledged(_ targets: [SplitflapProtocol.ModuleTarget], timeout: Double = 30) -> Bool {
        let deadline = MonotonicClock.now() + Int64(timeout * 1e9)
        changed.lock()
        defer { changed.unlock() }
        while counters.acknowledged != targets {
            if !changed.wait(untilMonotonic: deadline) { return counters.acknowledged == targets }
        }
        return true
    }

    /// One transport, used once: for a port that is open already (a test's pty).
    public convenience init(transport: any SerialTransport, retryMs: Int = SplitflapProtocol.retryMilliseconds,
                            log: @escaping @Sendable (String) -> Void = { _ in }) {
        let given = Mutex<(any SerialTransport)?>(transport)
        self.init(open: { () throws(SerialError) -> any SerialTransport in
            guard let t = given.withLock({ t in defer { t = nil }; return t }) else { throw SerialError(.gone, "the port is gone") }
            return t
        }, retryMs: retryMs, log: log)
    }

    public func stop() {
        shared.withLock { $0.running = false }
        thread.withLock { $0 }?.join()
    }

    private var running: Bool { shared.withLock { $0.running } }

    /// Opens, serves until the port fails, and again, until stopped.
    private func loop() {
        PortKeeper(name: "splitflap", open: open, log: log, running: { self.running }).run(
            serve: { (transport, reopened) throws(SerialError) in
                if reopened {
                    // Everything the display should show, again: it may have lost power too.
                    shared.withLock { s in
                        s.counters.resyncs += 1
                        if s.wanted == nil { s.wanted = s.counters.acknowledged.isEmpty ? nil : s.counters.acknowledged }
                    }
                    log("splitflap: port back; state sent again")
                }
                try serve(transport)
            },
            connected: { c in shared.withLock { $0.counters.connected = c } },
            failed: { shared.withLock { $0.counters.disconnects += 1 } })
    }

    /// What a still display reports against what it acknowledged: a module that is normal and
    /// not moving, on another flap, is a disagreement — logged, counted, and the state sent once
    /// more (a display that kept its power through a resync it ignored comes back this way).
    private func compare(_ modules: [SplitflapProtocol.ModuleState]) {
        let wrong: [(Int, Int, UInt8)]? = shared.withLock { s in
            let acked = s.counters.acknowledged
            guard s.wanted == nil, modules.count == acked.count, !modules.contains(where: \.moving) else { return nil }
            let wrong = modules.indices.filter { modules[$0].state == .normal && modules[$0].flap != Int(acked[$0].flap) }
                .map { ($0, modules[$0].flap, acked[$0].flap) }
            guard !wrong.isEmpty else { return nil }
            s.counters.disagreements += 1
            if !s.resent { s.resent = true; s.wanted = acked }
            return wrong
        }
        guard let wrong else { return }
        let some = wrong.prefix(3).map { "module \($0.0) shows flap \($0.1) where flap \($0.2) was sent" }.joined(separator: ", ")
        log("splitflap: the display disagrees with what it acknowledged: \(some)\(wrong.count > 3 ? " and \(wrong.count - 3) more" : "")")
    }

    private func serve(_ transport: any SerialTransport) throws(SerialError) {
        var splitter = FrameSplitter()
        var inFlight: (nonce: UInt32, frame: [UInt8], targets: [SplitflapProtocol.ModuleTarget], sentAt: Int64)?
        // A frame in flight when the port fails goes again after the reopen (unless a newer wish waits).
        defer { if let f = inFlight { shared.withLock { s in if s.wanted == nil { s.wanted = f.targets } } } }
        do {
            try transport.write(SplitflapProtocol.enterProtobufMode)
            while running {
                if shared.withLock({ s in defer { s.askState = false }; return s.askState }) {
                    let nonce = self.nonce.withLock { n in n = n == .max ? 1 : n + 1; return n }
                    try transport.write(SplitflapProtocol.requestState(nonce: nonce))
                }
                if inFlight == nil, let wanted = shared.withLock({ s in defer { s.wanted = nil }; return s.wanted }) {
                    let nonce = self.nonce.withLock { n in n = n == .max ? 1 : n + 1; return n }
                    let frame = SplitflapProtocol.config(nonce: nonce, modules: wanted)
                    try transport.write(frame)
                    inFlight = (nonce, frame, wanted, MonotonicClock.now())
                    shared.withLock { $0.counters.sent += 1 }
                }
                let wait = inFlight.map { max(1, Int(($0.sentAt + retryNanos - MonotonicClock.now()) / 1_000_000)) } ?? 20
                for stuffed in splitter.take(try transport.read(max: 4096, timeoutMs: wait)) {
                    do {
                        switch try SplitflapProtocol.decode(stuffed) {
                        case .ack(let n) where n == inFlight?.nonce:
                            let targets = inFlight!.targets
                            inFlight = nil
                            shared.withLock { s in
                                s.counters.acks += 1
                                if s.counters.acknowledged != targets { s.resent = false }
                                s.counters.acknowledged = targets
                            }
                            changed.lock(); changed.broadcast(); changed.unlock()
                        case .state(let modules, _):
                            shared.withLock { $0.counters.stateReports += 1; $0.counters.modules = modules }
                            changed.lock(); changed.broadcast(); changed.unlock()
                            if inFlight == nil { compare(modules) }
                        case .log(let text):
                            log("splitflap: \(text)")
                        default:
                            break
                        }
                    } catch .crc {
                        shared.withLock { $0.counters.crcErrors += 1 }
                    } catch {
                        shared.withLock { $0.counters.malformed += 1 }
                    }
                }
                if let f = inFlight, MonotonicClock.now() >= f.sentAt + retryNanos {
                    try transport.write(f.frame)
                    inFlight?.sentAt = MonotonicClock.now()
                    shared.withLock { $0.counters.retries += 1 }
                }
            }
        }
    }
}
