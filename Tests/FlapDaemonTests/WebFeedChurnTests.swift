import FlapCore
@testable import FlapLocalAPI
import Foundation
import Synchronization
import Testing
import TestWaits
@testable import FlapDaemon

/// Issue 39, item 1: pages that open and close `/events` while the board flips and the keepalive
/// fires never stop the feed. Before the fix, the keepalive woke every page's stream holding the
/// feed's lock while a closing page's end (the stream's own lock held) waited for the feed's lock:
/// both threads stopped for good, and with them every HTTP door.
@Suite struct WebFeedChurnTests {
    /// Pages come and go as the server's pump does (a task reading the stream, cancelled from
    /// another thread when the connection closes), on plain threads, while flips are pushed and
    /// the keepalive fires every millisecond. The churn runs off the cooperative pool so that a
    /// deadlock is seen as a bound passed, not as a test that hangs.
    @Test func pagesComingAndGoingWhileTheBoardFlipsNeverStopTheFeed() async {
        let feed = WebFeed(keepaliveEvery: 0.001)
        let keepalive = Task { await feed.run() }
        defer { keepalive.cancel() }
        let rounds = 400, pages = 4
        let done = DispatchSemaphore(value: 0)
        let opened = Atomic<Int>(0)
        for _ in 0..<pages {
            Thread {
                for _ in 0..<rounds {
                    guard let stream = feed.watch(hello: { .empty }) else { continue }
                    opened.add(1, ordering: .relaxed)
                    let read = DispatchSemaphore(value: 0)
                    let pump = Task {
                        var first = true
                        for await _ in stream where first { first = false; read.signal() }
                    }
                    read.wait()
                    pump.cancel()  // the connection closed: what the event loop does
                }
                done.signal()
            }.start()
        }
        let flipper = Thread {
            let glyph = Glyph(character: "A")!
            for i in 0..<(rounds * 20) {
                feed.flip(FlipEvent(board: 0, row: 0, col: i % 22, flip: 0, glyph: glyph, transition: 1,
                                    transitionStart: 0, planned: Int64(i), actual: Int64(i)))
                if i % 50 == 0 { feed.settled(board: 0, transition: 1, frame: Frame(rows: 1, cols: 22)) }
            }
        }
        flipper.start()
        // A deadlock is no progress, not slowness: the churn takes well under a second on an idle
        // machine, but each page's pump is a task on the cooperative pool, which the whole suite's
        // first minutes keep busy (in CI it took 116 s of the 120 once bound here). So it fails
        // only when no page has opened another stream for a whole minute.
        let finished = await offPool {
            var ended = 0, seen = -1
            while ended < pages {
                if done.wait(timeout: .now() + 60) == .success { ended += 1; continue }
                let now = opened.load(ordering: .relaxed)
                if now == seen { return false }
                seen = now
            }
            return true
        }
        #expect(finished, "pages stopped opening and closing for a minute: the feed is deadlocked (\(opened.load(ordering: .relaxed)) opened)")
        guard finished else { return }  // a deadlocked feed is left as it is: finishing it would hang
        #expect(opened.load(ordering: .relaxed) > 0)
        // The feed still takes a page and hands it its hello.
        #expect(feed.watch(hello: { .empty }) != nil)
        feed.finish()
    }
}
