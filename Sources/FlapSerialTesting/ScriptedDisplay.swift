import FlapSerial
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A scripted splitflap display on the other end of a pseudo-terminal pair: reads the host's
/// frames with the independent decoder and acks, drops, corrupts or answers with garbage as told.
public final class ScriptedDisplay: @unchecked Sendable {
    public enum Answer: Sendable {
        case ack, drop, corruptAck, garbageThenAck, stateThenAck, holdThenAck
        /// Acks, then reports every module still and normal on these flaps (a display that did
        /// not do what it acked).
        case ackThenReport([UInt8])
    }

    public typealias Standing = StandingModule

    /// What the display answers each request for its state (after an ack), in turn; the last
    /// is repeated. Empty: a state of no modules.
    public let standing = Mutex<[[Standing]]>([])
    /// How many requests for its state the display has had.
    public let stateRequests = Atomic(0)

    /// Lets a held answer go.
    public let release = DispatchSemaphore(value: 0)

    /// The host's end of the pty (nil when serving another descriptor).
    public let host: TermiosPort?
    private let peer: Int32
    private let script: [Answer]
    /// Each frame the host sent: (nonce, every module's target flap).
    public let received = Mutex<[(nonce: UInt64, flaps: [UInt64])]>([])
    private var thread: Thread?
    private let running = Atomic(true)
    private let quiet = Atomic(0)

    /// How many times the peer has found nothing to read for 50 ms: once it has grown by two
    /// since a writer ended, every byte that writer wrote has been received.
    public var quietSpells: Int { quiet.load(ordering: .relaxed) }

    /// A display on the far end of a new pseudo-terminal pair; the host talks to `host`.
    public init(_ script: [Answer]) throws {
        let (master, slave) = try PseudoTerminal.open()
        host = TermiosPort(descriptor: master)
        peer = slave
        self.script = script
        thread = Thread { [self] in serve() }
        thread?.start()
    }

    /// A display on the controlling side of a new pseudo-terminal pair, for another process to
    /// open as a serial device at `devicePath`.
    public init(device script: [Answer]) throws {
        let (master, slave) = try PseudoTerminal.open()
        devicePath = slavePath(slave: slave)
        keptOpen = slave  // so the master does not read EIO before the other process opens it
        host = nil
        peer = master
        self.script = script
        thread = Thread { [self] in serve() }
        thread?.start()
    }

    /// The device another process opens (with `init(device:)`).
    public private(set) var devicePath: String?
    private var keptOpen: Int32 = -1

    /// A display answering on an open descriptor (a socket to an emulated UART, say).
    public init(descriptor: Int32, _ script: [Answer]) {
        host = nil
        peer = descriptor
        self.script = script
        thread = Thread { [self] in serve() }
        thread?.start()
    }

    /// Stops answering.
    public func stop() { running.store(false, ordering: .relaxed) }

    /// Closes the display's end, as an unplugged adapter would.
    public func hangUp() {
        running.store(false, ordering: .relaxed)
        while thread?.isFinished == false { usleep(1000) }
        close(peer)
    }

    deinit { running.store(false, ordering: .relaxed) }

    private func reply(_ message: [UInt8], corrupt: Bool = false) {
        PeerFrames.write(peer, message, corrupt: corrupt ? 0 : nil)
    }

    private func serve() {
        var index = 0
        PeerFrames.read(peer, running: { running.load(ordering: .relaxed) }, stopAtEnd: true, quiet: { quiet.add(1, ordering: .relaxed) }) { body in
            let fields = Independent.fields(body)
            let nonce = fields.first { $0.0 == 1 }?.1 ?? 0
            let ack = [0x1A, UInt8(Independent.varint(nonce).count + 1), 0x08] + Independent.varint(nonce)
            if fields.contains(where: { $0.0 == 4 }) {  // request_state: not a config, not in the script
                stateRequests.add(1, ordering: .relaxed)
                let modules = standing.withLock { s in s.count > 1 ? s.removeFirst() : s.first ?? [] }.flatMap { m -> [UInt8] in
                    [0x0A, 6, 0x08, m.state, 0x10, m.flap, 0x18, m.moving ? 1 : 0]
                }
                reply(ack)
                reply([0x0A, UInt8(modules.count)] + modules)
                return
            }
            let flaps = Independent.fields(fields.first { $0.0 == 3 }?.2 ?? []).map { m in
                Independent.fields(m.2 ?? []).first { $0.0 == 1 }?.1 ?? 0
            }
            received.withLock { $0.append((nonce, flaps)) }
            let answer = index < script.count ? script[index] : .ack
            index += 1
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
            case .ackThenReport(let flaps):
                reply(ack)
                let modules = flaps.flatMap { f -> [UInt8] in [0x0A, 2, 0x10, f] }
                reply([0x0A, UInt8(modules.count)] + modules)
            case .stateThenAck:
                let module: [UInt8] = [0x08, 0x02, 0x10, 0x05, 0x30, 0x02]  // SENSOR_ERROR at flap 5, 2 missed homes
                reply([0x0A, UInt8(module.count + 2), 0x0A, UInt8(module.count)] + module)
                reply(ack)
            }
        }
    }
}
