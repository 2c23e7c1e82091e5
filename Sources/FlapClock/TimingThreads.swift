import CRealtime
import Foundation
import Synchronization

/// The one way a thread that times output starts — the conductor, GPIO steps, LED frames,
/// the serial cascades: named `flapd-<role>` (what `ps -L` and `top -H` show; Linux keeps 15
/// characters), with the wall's real-time settings applied to it first (SCHED_FIFO at the
/// configured priority, no timer slack). A setting the system refuses is warned about once,
/// however many threads it was refused to.
public final class TimingThreads: Sendable {
    /// What a thread was granted.
    public struct Grant: Sendable {
        /// It runs SCHED_FIFO.
        public var fifo: Bool
    }

    public let realtime: RealtimeOptions
    private let warn: @Sendable (String) -> Void
    private let warned = Mutex<Set<String>>([])

    public init(realtime: RealtimeOptions = .init(), warn: @escaping @Sendable (String) -> Void = { _ in }) {
        self.realtime = realtime
        self.warn = warn
    }

    /// Threads at normal priority, warnings dropped: for tests and tools.
    public static var plain: TimingThreads { TimingThreads() }

    /// Starts `body` on a new thread named `flapd-<role>`, once the settings are applied to it.
    @discardableResult
    public func start(_ role: String, stackSize: Int? = nil, _ body: @escaping @Sendable (Grant) -> Void) -> TimingThread {
        let name = String("flapd-\(role)".prefix(15))
        let handle = TimingThread()
        let t = Thread { [self] in
            // Set from the thread itself: Linux names a new thread after the one that made it.
            _ = flap_set_thread_name(name)
            let setup = RealtimeSetup.apply(priority: realtime.priority)
            report(setup.warnings)
            body(Grant(fifo: setup.fifo))
            handle.ended()
        }
        t.name = name
        if let stackSize { t.stackSize = stackSize }
        t.start()
        return handle
    }

    /// Warns of each refusal the first time it is seen.
    public func report(_ warnings: [String]) {
        for w in warnings where warned.withLock({ $0.insert(w).inserted }) { warn(w) }
    }
}

/// Real-time options of the wall: of every timing thread (`TimingThreads`), and the memory
/// lock and wake-latency request the conductor holds.
public struct RealtimeOptions: Sendable {
    /// SCHED_FIFO priority 1…99, or nil to stay SCHED_OTHER.
    public var priority: Int32?
    /// mlockall(MCL_CURRENT | MCL_FUTURE) so that no page fault delays a flip.
    public var lockMemory: Bool
    /// Asks the kernel (PM QoS, /dev/cpu_dma_latency) to keep CPUs out of idle states slower
    /// to wake than this, for as long as the conductor runs; nil: no request.
    public var wakeLatencyMicros: Int32?
    /// Most the thread spins on the clock before a deadline, having woken early by as much as
    /// its wake-ups have lately overslept (`DeadlineSleeper`), when it runs SCHED_FIFO (at
    /// normal priority it only sleeps); 0: sleep only.
    public var spinMicros: Int32
    /// The spin when nothing says otherwise, in microseconds.
    public static let defaultSpinMicros: Int32 = 500
    public init(priority: Int32? = nil, lockMemory: Bool = false, wakeLatencyMicros: Int32? = nil,
                spinMicros: Int32 = RealtimeOptions.defaultSpinMicros) {
        self.priority = priority; self.lockMemory = lockMemory; self.wakeLatencyMicros = wakeLatencyMicros
        self.spinMicros = spinMicros
    }
}

/// A thread `TimingThreads` started: `join()` returns once its body has (at once if it has).
public final class TimingThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    fileprivate func ended() { done.signal() }

    /// Waits for the body to return; any number of callers, any number of times.
    public func join() {
        done.wait()
        done.signal()
    }
}
