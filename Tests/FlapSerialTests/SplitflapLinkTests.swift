import Foundation
import Synchronization
import FlapSerialTesting
import Testing
import TestWaits
@testable import FlapSerial

@Suite struct SplitflapLinkTests {
    func targets(_ flaps: [UInt8]) -> [SplitflapProtocol.ModuleTarget] { flaps.map { .init(flap: $0) } }

    @Test func aDroppedFrameIsSentAgainWithTheSameNonce() async throws {
        let display = try ScriptedDisplay([.drop, .ack])
        let link = SplitflapLink(transport: display.host!, retryMs: 30)
        link.start()
        defer { link.stop() }
        link.set(targets([8, 1, 0]))
        #expect(await offPool { link.waitUntilAcknowledged(targets([8, 1, 0])) })
        // A display slower than the 30 ms retry (a loaded machine) gets the frame a third time:
        // every retry carries the same nonce and targets. Retries the link sent after the ack was
        // on its way may not have been read by the display yet: it has read at most 1 + retries.
        let got = display.received.withLock { $0 }
        #expect(got.count >= 2 && got.allSatisfy { $0.nonce == got[0].nonce && $0.flaps == [8, 1, 0] }, "\(got)")
        #expect(link.counters.retries >= got.count - 1 && link.counters.acks == 1 && link.counters.sent == 1, "\(link.counters)")
    }

    @Test func aCorruptAnswerIsCountedAndTheFrameRetried() async throws {
        let display = try ScriptedDisplay([.corruptAck, .garbageThenAck])
        let link = SplitflapLink(transport: display.host!, retryMs: 30)
        link.start()
        defer { link.stop() }
        link.set(targets([3]))
        #expect(await offPool { link.waitUntilAcknowledged(targets([3])) })
        let c = link.counters
        // One retry for the corrupt answer (more when the display answers slower than 30 ms).
        #expect(c.crcErrors == 1 && c.retries >= 1 && c.malformed == 1, "\(c)")
    }

    @Test func oneInFlightAndTheNewestWishWins() async throws {
        // The display holds its answer to the first frame; meanwhile two newer wishes arrive:
        // nothing more is sent while one is in flight, and then only the newest.
        let display = try ScriptedDisplay([.holdThenAck, .stateThenAck])
        let link = SplitflapLink(transport: display.host!, retryMs: 60_000)
        link.start()
        defer { link.stop() }
        link.set(targets([1]))
        #expect(await eventually { !display.received.withLock { $0.isEmpty } })
        link.set(targets([2]))
        link.set(targets([3]))
        display.release.signal()
        #expect(await offPool { link.waitUntilAcknowledged(targets([3])) })
        let flaps = display.received.withLock { $0.map(\.flaps) }
        #expect(flaps == [[1], [3]], "\(flaps)")
        #expect(link.counters.modules.first?.state == .sensorError && link.counters.modules.first?.missedHome == 2)
        #expect(link.counters.retries == 0)
    }

    @Test func aVanishedPortIsReopenedAndTheWholeStateSentAgain() async throws {
        let first = try ScriptedDisplay([.ack])
        let second = try ScriptedDisplay([.ack])
        let ports = Mutex<[ScriptedDisplay]>([first, second])
        let link = SplitflapLink(open: { () throws(SerialError) -> any SerialTransport in
            guard let d = ports.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { throw SerialError(.find, "no such port") }
            return d.host!
        }, retryMs: 30)
        link.start()
        defer { link.stop() }
        link.set(targets([4, 5]))
        #expect(await offPool { link.waitUntilAcknowledged(targets([4, 5])) })
        first.hangUp()
        // The second port takes over: it is sent the whole state without a new wish.
        #expect(await eventually { !second.received.withLock { $0.isEmpty } })
        #expect(second.received.withLock { $0.first?.flaps } == [4, 5])
        // Issue 12: the nonce goes on across the reopen. The firmware ignores a frame whose
        // nonce is the last it handled, so a display that kept its power would keep its state.
        let last = first.received.withLock { $0.last?.nonce }, resync = second.received.withLock { $0.first?.nonce }
        #expect(last != nil && resync != last, "\(String(describing: last)) then \(String(describing: resync))")
        let c = link.counters
        #expect(c.disconnects == 1 && c.resyncs == 1, "\(c)")
    }

    /// A restarted flapd does not begin where the last one did (at 1): nonces start at random.
    @Test func eachLinkStartsItsNoncesAtRandom() async throws {
        let a = try ScriptedDisplay([.ack]), b = try ScriptedDisplay([.ack])
        for display in [a, b] {
            let link = SplitflapLink(transport: display.host!, retryMs: 30)
            link.start()
            link.set(targets([1]))
            #expect(await offPool { link.waitUntilAcknowledged(targets([1])) })
            link.stop()
        }
        let first = a.received.withLock { $0.first?.nonce }, second = b.received.withLock { $0.first?.nonce }
        #expect(first != nil && first != second)
    }

    /// Issue 12: the state a display reports is compared with what it acknowledged; a still,
    /// normal module on another flap is logged, counted, and the state sent once more.
    @Test func aDisplayThatDisagreesIsToldAgain() async throws {
        let display = try ScriptedDisplay([.ackThenReport([4, 9]), .ackThenReport([4, 9])])
        let said = Mutex<[String]>([])
        let link = SplitflapLink(transport: display.host!, retryMs: 30) { line in said.withLock { $0.append(line) } }
        link.start()
        defer { link.stop() }
        link.set(targets([4, 5]))
        #expect(await offPool { link.waitUntilAcknowledged(targets([4, 5])) })
        // Sent once more, with a new nonce; a display that still disagrees is not told a third time.
        _ = await eventually { display.received.withLock { $0.count >= 2 } && link.counters.disagreements >= 2 }
        // Two nonces (retries of either, on a loaded machine, carry the same one), every frame [4, 5].
        let frames = display.received.withLock { $0 }
        var nonces: [UInt64] = []
        for f in frames where nonces.last != f.nonce { nonces.append(f.nonce) }
        #expect(nonces.count == 2 && frames.allSatisfy { $0.flaps == [4, 5] }, "\(frames)")
        #expect(said.withLock { $0.contains { $0.contains("module 1 shows flap 9 where flap 5 was sent") } }, "\(said.withLock { $0 })")
    }
}
