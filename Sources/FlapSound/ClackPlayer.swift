import FlapWiring
import CALSA
import FlapCore
import FlapClock
import Foundation
import Synchronization

/// Plays the clack of every flip through ALSA at its 90° instant: a `ClackSink` of the
/// conductor with an audio thread of its own writing one continuous stream. Each clack is
/// mixed in at the sample that will sound at its instant on the monotonic timeline (the stream
/// position is mapped to the clock through the PCM's delay, and re-mapped after an underrun or
/// when they drift apart by more than half a millisecond).
///
/// Faults never stop the board: no device, a busy one or one that vanishes → one warning, silence,
/// and a new try every few seconds.
public final class ClackPlayer: ClackSink {
    public typealias Options = ClackOptions

    /// Counters of the audio path.
    public struct Counters: Sendable, Hashable {
        public var clacks = 0
        public var late = 0
        public var dropped = 0
        public var underruns = 0
        public var remaps = 0
        public var openFailures = 0
        public var peak: Float = 0
        /// The monotonic instant (ns) at which the first frame written to the device sounds, as
        /// the current clock mapping has it: frame n of the stream sounds at origin + n / rate.
        public var origin: Int64 = 0
        public var rate = 0
        /// How far from its planned instant each clack was placed in the stream.
        public var onsetError = LatenessHistogram().summary
    }

    private let options: Options
    private let pending = Mutex<[ClackMixer.Clack]>([])
    private let counters = Mutex(Counters())
    private let running = Atomic<Bool>(true)
    private let exited = DispatchSemaphore(value: 0)
    private let stopSignal = DispatchSemaphore(value: 0)
    private let warn: @Sendable (String) -> Void
    private let notice: @Sendable (String) -> Void
    private let variants: [[Float]]
    private let rng = Mutex(SeededRandom(seed: 0xC1AC_C1AC))
    /// The monotonic instant up to which the stream is written.
    private let writtenThrough = Mutex<Int64>(0)
    private let progress = DispatchSemaphore(value: 0)

    /// Synthesises the clacks and starts the audio thread (`flapd-clack`, as `threads` start it:
    /// the wall's real-time class); `warn` gets each fault once, and `notice` the news that
    /// sound is back after one.
    public init(options: Options, threads: TimingThreads = .plain, warn: @escaping @Sendable (String) -> Void,
                notice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.warn = warn
        self.notice = notice
        variants = options.model.synthesize()
        threads.start("clack") { [self] _ in
            var loop = AudioLoop(player: self)
            loop.run()
            exited.signal()
        }
    }

    public var stats: Counters { counters.withLock { $0 } }

    /// Waits until the stream is written through `instant` (monotonic ns); false if the sound
    /// device is not open by then or the player stopped.
    public func waitUntilWritten(through instant: Int64) -> Bool {
        while writtenThrough.withLock({ $0 }) < instant {
            guard running.load(ordering: .acquiring), progress.wait(timeout: .now() + 10) == .success else { return false }
        }
        return true
    }

    public func schedule(board: Int, clacks: [Int64], since: Int64) {
        // Each clack is judged at its own instant on the timeline: a transition that runs into
        // quiet hours falls silent where they begin. (The local time zone read once, now.)
        var audible = clacks
        if options.quiet.from != options.quiet.to {
            let now = MonotonicClock.now()
            let (minute, second) = DailySpan.minute(Date().timeIntervalSince1970, in: options.quiet.timeZone)
            audible.removeAll { t in
                let minutes = Int(((second + Double(t - now) / 1e9) / 60).rounded(.down))
                return options.quiet.contains(minute: ((minute + minutes) % 1440 + 1440) % 1440)
            }
        }
        let spread = options.model.levelSpread
        let count = variants.count
        let fresh: [ClackMixer.Clack] = rng.withLock { rng in
            audible.map { t in
                ClackMixer.Clack(instant: t, board: board, gain: Float(1 + rng.uniform(-spread, spread)),
                                 variant: Int(rng.next() % UInt64(count)))
            }
        }
        let stale = MonotonicClock.now() - 1_000_000_000
        pending.withLock { p in
            // Replaced, or long past (nothing plays them while the device is away).
            p.removeAll { ($0.board == board && $0.instant >= since) || $0.instant < stale }
            p += fresh
            p.sort { $0.instant < $1.instant }
        }
    }

    /// Ends the audio thread after what is written has been handed to the device.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopSignal.signal()
        exited.wait()
    }

    /// The audio thread's side: one PCM, the mixer, the clock mapping.
    private struct AudioLoop {
        let player: ClackPlayer
        var mixer: ClackMixer
        var warned = false

        init(player: ClackPlayer) {
            self.player = player
            mixer = ClackMixer(variants: player.variants)
            mixer.volume = player.options.volume
        }

        mutating func run() {
            flap_alsa_quiet()
            while player.running.load(ordering: .acquiring) {
                switch PCM.open(player.options) {
                case .success(let pcm):
                    if warned { player.notice("sound back on: ALSA device '\(player.options.device)' is open") }
                    warned = false
                    let stopped = play(pcm)
                    pcm.close()
                    if !stopped {
                        warned = true
                        _ = player.stopSignal.wait(timeout: .now() + player.options.retrySeconds)
                    }
                case .failure(let fault):
                    let message = fault.message
                    player.counters.withLock { $0.openFailures += 1 }
                    if !warned { player.warn("sound off: \(message); the board flips silently, retrying every \(Int(player.options.retrySeconds)) s") }
                    warned = true
                    _ = player.stopSignal.wait(timeout: .now() + player.options.retrySeconds)
                }
            }
        }

        /// Writes the stream until stopped (true) or the device fails (false, after a warning).
        mutating func play(_ pcm: PCM) -> Bool {
            let rate = pcm.rate
            let period = pcm.periodFrames
            let nanosPerFrame = 1e9 / Double(rate)
            var floats = [Float](repeating: 0, count: period)
            var samples = [Int16](repeating: 0, count: period)
            // Prefill the whole buffer with silence, which starts the device (its start
            // threshold is a full buffer); then map: the next frame sounds after the delay.
            // Clacks due in the first 200 ms may sit off by what the device settles to.
            let prefill = max(period, pcm.bufferFrames / period * period)
            for _ in 0..<(prefill / period) {
                let rc = pcm.write(samples, frames: period)
                if rc < 0 {
                    player.warn("sound device \(player.options.device) refused the stream (\(PCM.describe(rc))); the board flips silently")
                    return false
                }
            }
            var written: Int64 = 0
            var baseFrame: Int64 = 0
            var baseTime = MonotonicClock.now() + Int64(Double(pcm.delay() ?? 0) * nanosPerFrame)
            let origin = { (baseTime: Int64, baseFrame: Int64) in baseTime - Int64(Double(Int64(prefill) + baseFrame) * nanosPerFrame) }
            player.counters.withLock { $0.origin = origin(baseTime, baseFrame); $0.rate = rate }
            let bufferNanos = Int64(Double(pcm.bufferFrames) * nanosPerFrame)
            var lastCheck = MonotonicClock.now()
            while player.running.load(ordering: .acquiring) {
                let time = baseTime + Int64(Double(written - baseFrame) * nanosPerFrame)
                // Stay no more than one buffer ahead of the clock (a device that does not pace
                // itself, such as the file plugin, is paced here).
                let now = MonotonicClock.now()
                if time - now > bufferNanos { MonotonicClock.sleep(until: time - bufferNanos) }
                var due = player.pending.withLock { p -> [ClackMixer.Clack] in
                    let end = time + Int64(Double(period) * nanosPerFrame)
                    var n = 0
                    while n < p.count, p[n].instant < end { n += 1 }
                    defer { p.removeFirst(n) }
                    return Array(p[0..<n])
                }
                mixer.render(&floats, frames: period, time: time, rate: rate, pending: &due)
                for i in 0..<period { samples[i] = Int16(max(-32767, min(32767, (floats[i] * 32767).rounded()))) }
                var rc = pcm.write(samples, frames: period)
                // An underrun: the device ran dry and took nothing. Once recovered, the stream
                // goes on from now and the same period is written again, so the clacks mixed
                // into it sound (late) rather than vanish while counted as played.
                for _ in 0..<2 where rc == -EPIPE || rc == -ESTRPIPE {
                    guard pcm.recover(rc) else { break }
                    player.counters.withLock { $0.underruns += 1 }
                    baseFrame = written
                    baseTime = MonotonicClock.now() + Int64(Double(pcm.delay() ?? 0) * nanosPerFrame)
                    player.counters.withLock { $0.origin = origin(baseTime, baseFrame) }
                    rc = pcm.write(samples, frames: period)
                }
                if rc < 0 {
                    player.warn("sound device \(player.options.device) failed (\(PCM.describe(rc))); the board flips silently while it is reopened")
                    return false
                }
                written += Int64(period)
                // Written through the end of what was rendered (every clack due before it is
                // counted) — not the end by a mapping an underrun just moved on, whose gap the
                // next period renders (and counts what it finds overdue as dropped).
                let through = time + Int64(Double(period) * nanosPerFrame)
                // Counters first: whoever sees the stream written through an instant sees every
                // clack due before it counted (played, late or dropped).
                player.counters.withLock {
                    $0.clacks = mixer.started; $0.late = mixer.late; $0.dropped = mixer.dropped; $0.peak = mixer.peak
                    if $0.onsetError.count != mixer.onsetError.count { $0.onsetError = mixer.onsetError.summary }
                }
                player.writtenThrough.withLock { $0 = through }
                player.progress.signal()
                // Once a second: does the device still sound frame `written` when we think?
                let after = MonotonicClock.now()
                // While the device settles (its first 200 ms, when some report a delay that does
                // not hold yet) the mapping is checked every period, then once a second.
                let settling = written < Int64(rate / 5)
                if settling || after - lastCheck > 1_000_000_000, let delay = pcm.delay(), delay > 0 {
                    lastCheck = after
                    let measured = after + Int64(Double(delay) * nanosPerFrame)
                    let predicted = baseTime + Int64(Double(written - baseFrame) * nanosPerFrame)
                    if abs(measured - predicted) > 500_000 {
                        baseFrame = written
                        baseTime = measured
                        player.counters.withLock { if !settling { $0.remaps += 1 }; $0.origin = origin(baseTime, baseFrame) }
                    }
                }
            }
            pcm.drain()
            return true
        }
    }
}
