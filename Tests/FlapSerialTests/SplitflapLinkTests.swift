import Foundation
import Synchronization
import Testing
@testable import FlapSerial

/// A scripted splitflap display on the other end of a pseudo-terminal pair: reads the host's
/// frames with the independent decoder and acks, drops, corrupts or answers with garbage as told.
final class ScriptedDisplay: @unchecked Sendable {
    enum Answer { case ack, drop, corruptAck, garbageThenAck, stateThenAck, holdThenAck }

    /// Lets a held answer go.
    let release = DispatchSemaphore(value: 0)

    let host: TermiosPort
    private let peer: Int32
    private let script: [Answer]
    /// Each frame the host sent: (nonce, every module's target flap).
    let received = Mutex<[(nonce: UInt64, flaps: [UInt64])]>([])
    private var thread: Thread?
    private let running = Atomic(true)

    init(_ script: [Answer]) throws {
        var master: Int32 = 0, slave: Int32 = 0
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw SerialError("openpty failed") }
        host = TermiosPort(descriptor: master)
        _ = TermiosPort(descriptor: slave)  // raw mode on the peer's end too (the object is not kept)
        peer = slave
        self.script = script
        thread = Thread { [self] in serve() }
        thread?.start()
    }

    deinit { running.store(false, ordering: .relaxed) }

    private func reply(_ message: [UInt8], corrupt: Bool = false) {
        let c = Independent.crc32(message)
        var raw = message + [UInt8(c & 255), UInt8(c >> 8 & 255), UInt8(c >> 16 & 255), UInt8(c >> 24)]
        if corrupt { raw[0] ^= 0x01 }
        let bytes = COBS.encode(raw) + [0]
        _ = bytes.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
    }

    private func serve() {
        var pending: [UInt8] = []
        var index = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while running.load(ordering: .relaxed) {
            var p = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { read(peer, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            for b in buffer[0..<n] {
                guard b == 0 else { pending.append(b); continue }
                defer { pending = [] }
                guard !pending.isEmpty, let body = Independent.body(Independent.unstuff(pending)) else { continue }
                let fields = Independent.fields(body)
                let nonce = fields.first { $0.0 == 1 }?.1 ?? 0
                let flaps = Independent.fields(fields.first { $0.0 == 3 }?.2 ?? []).map { m in
                    Independent.fields(m.2 ?? []).first { $0.0 == 1 }?.1 ?? 0
                }
                received.withLock { $0.append((nonce, flaps)) }
                let answer = index < script.count ? script[index] : .ack
                index += 1
                let ack = [0x1A, UInt8(Independent.varint(nonce).count + 1), 0x08] + Independent.varint(nonce)
                switch answer {
                case .ack: reply(ack)
                case .holdThenAck:
                    release.wait()
                    reply(ack)
                case .drop: break
                case .corruptAck: reply(ack, corrupt: true)
                case .garbageThenAck:
                    let junk: [UInt8] = [0x55, 0x13, 0x99, 0]
                    _ = junk.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
                    reply(ack)
                case .stateThenAck:
                    let module: [UInt8] = [0x08, 0x02, 0x10, 0x05, 0x30, 0x02]  // SENSOR_ERROR at flap 5, 2 missed homes
                    reply([0x0A, UInt8(module.count + 2), 0x0A, UInt8(module.count)] + module)
                    reply(ack)
                }
            }
        }
    }
}

extension Independent {
    static func varint(_ v: UInt64) -> [UInt8] {
        var out: [UInt8] = [], x = v
        repeat { out.append(UInt8(x & 127) | (x >= 128 ? 128 : 0)); x >>= 7 } while x > 0
        return out
    }
}

@Suite struct SplitflapLinkTests {
    func targets(_ flaps: [UInt8]) -> [SplitflapProtocol.ModuleTarget] { flaps.map { .init(flap: $0) } }

    @Test func aDroppedFrameIsSentAgainWithTheSameNonce() throws {
        let display = try ScriptedDisplay([.drop, .ack])
        let link = SplitflapLink(transport: display.host, retryMs: 30)
        link.start()
        defer { link.stop() }
        link.set(targets([8, 1, 0]))
        #expect(link.waitUntilAcknowledged(targets([8, 1, 0])))
        let got = display.received.withLock { $0 }
        #expect(got.count == 2 && got[0].nonce == got[1].nonce && got[0].flaps == [8, 1, 0])
        #expect(link.counters.retries == 1 && link.counters.acks == 1 && link.counters.sent == 1)
    }

    @Test func aCorruptAnswerIsCountedAndTheFrameRetried() throws {
        let display = try ScriptedDisplay([.corruptAck, .garbageThenAck])
        let link = SplitflapLink(transport: display.host, retryMs: 30)
        link.start()
        defer { link.stop() }
        link.set(targets([3]))
        #expect(link.waitUntilAcknowledged(targets([3])))
        let c = link.counters
        #expect(c.crcErrors == 1 && c.retries == 1 && c.malformed == 1, "\(c)")
    }

    @Test func oneInFlightAndTheNewestWishWins() throws {
        // The display holds its answer to the first frame; meanwhile two newer wishes arrive:
        // nothing more is sent while one is in flight, and then only the newest.
        let display = try ScriptedDisplay([.holdThenAck, .stateThenAck])
        let link = SplitflapLink(transport: display.host, retryMs: 60_000)
        link.start()
        defer { link.stop() }
        link.set(targets([1]))
        while display.received.withLock({ $0.isEmpty }) { usleep(1000) }
        link.set(targets([2]))
        link.set(targets([3]))
        display.release.signal()
        #expect(link.waitUntilAcknowledged(targets([3])))
        let flaps = display.received.withLock { $0.map(\.flaps) }
        #expect(flaps == [[1], [3]], "\(flaps)")
        #expect(link.counters.modules.first?.state == .sensorError && link.counters.modules.first?.missedHome == 2)
        #expect(link.counters.retries == 0)
    }
}
