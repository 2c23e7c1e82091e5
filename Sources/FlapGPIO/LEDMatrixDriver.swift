import FlapWiring
import FlapCore
import FlapClock
import Foundation
import Synchronization

/// One board of MAX7219 8 × 8 LED modules: each flip of the plan is drawn as four frames — the
/// upper half folding down, the glyph changing at the 90° instant — and a small thread of its
/// own shifts the whole chain out at each frame's instant (`clock_nanosleep`, as the steppers).
/// (`@unchecked Sendable`: every `var` is read and written under `lock`; the thread's handle is in
/// a `Mutex`.)
public final class LEDMatrixDriver: MovePlanSink, @unchecked Sendable {
    public let board: Int
    private let cols: Int
    private let chain: MAX7219Chain
    private let outputs: any GPIOOutputs
    private let log: @Sendable (String) -> Void
    private let lock = NSCondition()
    /// What each module shows now.
    private var images: [[UInt8]]
    /// (instant, module, image, the start of the flip it draws, the flap it ends on and that
    /// flap's image), soonest last.
    private var due: [(at: Int64, module: Int, image: [UInt8], flipStart: Int64, flap: Int, end: [UInt8])] = []
    /// The image of the flap each module's frames shown so far end on: what a stop draws.
    private var ends: [[UInt8]]
    /// The flap each module's frames shown so far draw (a flip in progress counted as
    /// finished; nil until a plan has moved the module).
    private var drawn: [Int?]
    private var running = false
    private let thread = Mutex<TimingThread?>(nil)
    private var shownFrames = 0
    /// How many frames have gone out to the chain.
    public var frames: Int { lock.lock(); defer { lock.unlock() }; return shownFrames }

    public init(board: Int, rows: Int, cols: Int, chain: MAX7219Chain, outputs: any GPIOOutputs,
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.board = board
        self.cols = cols
        self.chain = chain
        self.outputs = outputs
        self.log = log
        images = Array(repeating: Array(repeating: 0, count: 8), count: rows * cols)
        ends = images
        drawn = Array(repeating: nil, count: rows * cols)
    }

    /// The flap (drum index) each module shows as the frames written so far leave it, a flip in
    /// progress counted as finished; nil for a module no plan has moved. After `stop`, what the
    /// saved state must say: the glyph the chain's last frame draws.
    public var flaps: [Int?] { lock.lock(); defer { lock.unlock() }; return drawn }

    /// Whether every planned frame has been shown.
    public var idle: Bool { lock.lock(); defer { lock.unlock() }; return due.isEmpty && !writing }
    /// The thread is writing a frame it took from the queue.
    private var writing = false

    /// Sets the chain up and shows `glyphs` (row by row: the board as it stands); the frame
    /// thread (`flapd-led`) starts as `threads` start it.
    public func start(glyphs: [Glyph]?, threads: TimingThreads = .plain) {
        lock.lock()
        if let glyphs, glyphs.count == images.count { images = glyphs.map(LEDFont.rows) }
        ends = images
        running = true
        let first = chain.setup.flatMap { chain.all($0.register, $0.data) } + chain.show(images)
        lock.unlock()
        write(first)
        thread.withLock { $0 = threads.start("led") { [self] _ in loop() } }
    }

    /// Stops once the frames still planned (after `finish`: each module's flip in progress)
    /// have been shown, waiting at most `drainSeconds`. A flip whose frames could not all go out
    /// by then (a starved machine) is drawn at its end in one last frame: the chain never stays
    /// on a fold, and its last frame draws what `flaps` says.
    public func stop(drainSeconds: Double = 10) {
        drain(seconds: drainSeconds) { idle }
        lock.lock(); running = false; lock.broadcast(); lock.unlock()
        thread.withLock { $0 }?.join()
        lock.lock()
        let left = due.count
        due.removeAll()
        let last = images == ends ? nil : chain.show(ends)
        images = ends
        lock.unlock()
        guard let last else { return }
        log("LED board \(board): \(left) frames of the flips in progress had not gone out \(drainSeconds) s into the stop; each module is drawn at the end of its flip")
        write(last)
    }

    public func planned(board: Int, plan: FlipPlan, transitionStart: Int64) {
        guard board == self.board else { return }
        let flip = plan.timing.flip, drum = plan.drum.glyphs
        lock.lock()
        // Every module: flips not started by now are replaced (the conductor's rule).
        due.removeAll { $0.flipStart > transitionStart }
        for m in plan.moves {
            let module = Int(m.row) * cols + Int(m.col)
            var shown = LEDFont.rows(drum[Int(m.from)])
            for k in 0..<Int(m.flips) {
                let flap = m.position(afterFlip: k, drumCount: drum.count)
                let next = LEDFont.rows(drum[flap])
                let start = transitionStart + m.flipStart(k, flip: flip)
                for phase in 1...4 {
                    due.append((start + Int64(phase) * flip / 4, module, LEDFold.frame(from: shown, to: next, phase: phase), start, flap, next))
                }
                shown = next
            }
        }
        due.sort { $0.at > $1.at }
        lock.broadcast()
        lock.unlock()
    }

    public func finish(board: Int, at instant: Int64) {
        guard board == self.board else { return }
        lock.lock()
        due.removeAll { $0.flipStart > instant }
        lock.broadcast()
        lock.unlock()
    }

    private func loop() {
        lock.lock()
        while running {
            guard lock.waitForDue(due.last?.at) else { continue }
            while let d = due.last, d.at <= MonotonicClock.now() {
                images[d.module] = d.image
                drawn[d.module] = d.flap
                ends[d.module] = d.end
                due.removeLast()
            }
            let writes = chain.show(images)
            shownFrames += 1
            writing = true
            lock.unlock()
            write(writes)
            lock.lock()
            writing = false
        }
        lock.unlock()
    }

    private func write(_ vectors: [[Bool]]) {
        for v in vectors {
            do { try outputs.write(v) } catch { log("\(error)") }
            if chain.holdNanos > 0 { MonotonicClock.sleep(until: MonotonicClock.now() + chain.holdNanos) }
        }
    }
}
