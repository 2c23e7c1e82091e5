import FlapClock
import FlapCore
import FlapNet
import Foundation
import ServiceLifecycle
import Synchronization

/// The board as the web page watches it: a `FlipObserver` that hands every flip the conductor
/// fires (with its planned and actual instants) and every settled frame to the pages watching,
/// as server-sent events. The page animates each flip at its planned instant, so it shows the
/// wall's own cascade — from the one timeline the other outputs follow, not from a plan of its own.
///
/// On the conductor's thread it does nothing while no page watches, else one short push; the
/// JSON is written on a thread of its own, at most every `batch` (about 40 frames a second), and
/// a page that does not keep up loses its oldest events, never the conductor's time (the next
/// settled frame puts it right).
///
/// A `Service`: while it runs, a page that sees no flip gets a keepalive; when it stops (before
/// the local API, whose connections its pages hold), every page's stream ends.
public final class WebFeed: FlipObserver, Service, Sendable {
    /// Pages that may watch at once; one more is refused (503).
    public static let maxWatchers = 8
    /// Events kept for a page that reads slowly, before its oldest are dropped.
    static let backlog = 256
    /// How long flips gather before they are sent together.
    static let batch = 0.025

    enum Item: Sendable {
        case flip(FlipEvent)
        case settled(board: Int, transition: Int, frame: Frame)
    }

    /// The pages watching, each a stream of event chunks. Its lock only adds, removes and copies
    /// entries: a stream is woken outside it, because a stream's end (a page that goes) runs
    /// under the stream's own lock and takes this one — holding this lock while waking a stream
    /// deadlocked the two (issue 39).
    final class Watchers: Sendable {
        let streams = Mutex<(next: Int, all: [Int: AsyncStream<[UInt8]>.Continuation])>((0, [:]))
        let count = Atomic<Int>(0)

        func send(_ chunk: [UInt8]) {
            for c in streams.withLock({ Array($0.all.values) }) { c.yield(chunk) }
        }
    }

    private let watchers = Watchers()
    private let queue: OutputQueue<Item>
    private let every: Double

    /// - Parameter every: how often a page that sees no flip gets a comment line, so that a
    ///   page (or a proxy) gone without a word is found out by the write that fails, and its
    ///   place freed.
    public init(keepaliveEvery every: Double = 15) {
        let watchers = self.watchers
        // Its thread starts with the service (`run`), not here.
        queue = OutputQueue(name: "flapd-web", startNow: false) { items in
            for chunk in WebFeed.events(items) { watchers.send(chunk) }
            Thread.sleep(forTimeInterval: WebFeed.batch)  // lets the next flips gather
        }
        self.every = every
    }

    /// Keepalives until the service group stops (or the task is cancelled); then every page's
    /// stream ends.
    public func run() async {
        queue.start()
        await cancelWhenGracefulShutdown { [watchers, every] in
            while (try? await Task.sleep(for: .seconds(every))) != nil { watchers.send(Array(": keepalive\n\n".utf8)) }
        }
        finish()
    }

    public func flip(_ event: FlipEvent) {
        guard watchers.count.load(ordering: .relaxed) > 0 else { return }
        queue.push(.flip(event))
    }

    public func settled(board: Int, transition: Int, frame: Frame) {
        guard watchers.count.load(ordering: .relaxed) > 0 else { return }
        queue.push(.settled(board: board, transition: transition, frame: frame))
    }

    /// A new page's stream of events, beginning with `hello` (what `hello()` makes, called once
    /// the page is counted, so no flip falls between the two); nil when `maxWatchers` watch.
    func watch(hello: () -> LocalReply.Hello) -> AsyncStream<[UInt8]>? {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(Self.backlog))
        let id: Int? = watchers.streams.withLock { s in
            guard s.all.count < Self.maxWatchers else { return nil }
            s.next += 1
            s.all[s.next] = continuation
            watchers.count.store(s.all.count, ordering: .relaxed)
            return s.next
        }
        guard let id else { return nil }
        let all = watchers
        continuation.onTermination = { _ in
            all.streams.withLock { s in
                s.all[id] = nil
                all.count.store(s.all.count, ordering: .relaxed)
            }
        }
        continuation.yield(Self.event("hello", hello()))
        return stream
    }

    /// Ends every page's stream (flapd is stopping) and the feed's thread; once.
    public func finish() {
        // Finished outside the lock: a stream's end takes it to count the page out.
        for c in watchers.streams.withLock({ Array($0.all.values) }) { c.finish() }
        queue.close()
    }

    /// One `flips` event for the flips of a batch (rows of `[board, row, col, code, planned ms,
    /// actual ms, transition]`, instants on the monotonic clock), and one `settled` event per
    /// settled board, in the order they came.
    static func events(_ items: [Item]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var flips: [LocalReply.Flips.Row] = []
        func flush() {
            guard !flips.isEmpty else { return }
            out.append(event("flips", LocalReply.Flips(now: ms(MonotonicClock.now()), flips: flips)))
            flips.removeAll()
        }
        for item in items {
            switch item {
            case .flip(let e):
                flips.append(.init(board: e.board, row: e.row, col: e.col, code: Int(e.glyph.code), planned: ms(e.planned),
                                   actual: ms(e.actual), transition: e.transition))
            case .settled(let board, let transition, let frame):
                flush()
                out.append(event("settled", LocalReply.Settled(board: board, transition: transition, codes: frame.codes)))
            }
        }
        flush()
        return out
    }

    /// Monotonic nanoseconds as milliseconds, to the microsecond.
    static func ms(_ nanos: Int64) -> Double { Double(nanos / 1000) / 1000 }

    /// One server-sent event: its name and its JSON on one `data:` line.
    static func event<T: Encodable>(_ name: String, _ value: T) -> [UInt8] {
        Array("event: \(name)\ndata: ".utf8) + Array(SortedJSON.data(encoding: value)) + Array("\n\n".utf8)
    }
}
