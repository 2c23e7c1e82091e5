import FlapSerial
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A scripted flapbus controller on the controlling side of a pseudo-terminal pair, for another
/// process to open at `devicePath`: reads frames with the independent decoder, records them, and
/// answers HELLO with INFO (stepper or LED modules), STATUS with a report (`faulty` modules in
/// fault, the rest normal) and everything else with ACK — or drops or corrupts the answer as told.
public final class ScriptedController: @unchecked Sendable {
    public enum Answer { case answer, drop, corrupt }

    /// A frame the host sent, as read here.
    public struct Received: Equatable, Sendable {
        public var type: UInt8
        public var nonce: UInt16
        public var payload: [UInt8]
    }

    /// A MOVE entry as read here.
    public struct Move: Equatable, Sendable {
        public var module: Int, flap: Int, startMicros: UInt64, flipMs: Int
    }

    /// A SHOW entry as read here.
    public struct Show: Equatable, Sendable {
        public var module: Int, code: Int, atMicros: UInt64
    }

    public typealias Standing = StandingModule

    /// What STATUS is answered with, in turn (the last repeated), with the `moving` bits; empty:
    /// every module normal (`faulty` in fault) on flap 0, without the `moving` bits.
    public let standing = Mutex<[[Standing]]>([])

    public let devicePath: String
    public let received = Mutex<[Received]>([])
    private let master: Int32, slave: Int32
    private let script: [Answer]
    private let modules: Int
    private let led: Bool
    private let faulty: Set<Int>
    private let running = Atomic(true)
    private let quiet = Atomic(0)

    /// How many times the peer has found nothing to read for 50 ms: once it has grown by two
    /// since a writer ended, every byte that writer wrote has been received.
    public var quietSpells: Int { quiet.load(ordering: .relaxed) }
    private var thread: Thread?

    public init(modules: Int, led: Bool = false, faulty: Set<Int> = [], _ script: [Answer] = []) throws {
        let (m, s) = try PseudoTerminal.open()
        master = m
        slave = s
        devicePath = slavePath(slave: s)
        self.modules = modules
        self.led = led
        self.faulty = faulty
        self.script = script
        thread = Thread { [self] in serve() }
        thread?.start()
    }

    public func stop() { running.store(false, ordering: .relaxed) }

    /// Every MOVE entry received, in order (a frame sent again counts once).
    public var moves: [Move] {
        entries(of: 0x10, size: 13, move)
    }

    /// The MOVE entry at offset `o` of a payload.
    private func move(_ p: [UInt8], _ o: Int) -> Move {
        Move(module: Int(u(p, o, 2)), flap: Int(p[o + 2]), startMicros: u(p, o + 3, 8), flipMs: Int(u(p, o + 11, 2)))
    }

    /// The MOVE entries of each MOVE frame, in order: a frame sent again counts once, and one
    /// of a host that restarted (numbering its frames from 1 again) counts as new.
    public var moveFrames: [[Move]] {
        var seen: Set<[UInt8]> = []
        return received.withLock { $0 }.filter { $0.type == 0x10 && seen.insert([UInt8(truncatingIfNeeded: $0.nonce), UInt8($0.nonce >> 8)] + $0.payload).inserted }.map { f in
            (0..<Int(f.payload[0])).map { move(f.payload, 1 + $0 * 13) }
        }
    }

    /// Every SHOW entry received, in order (a frame sent again counts once).
    public var shows: [Show] {
        entries(of: 0x11, size: 11) { p, o in Show(module: Int(u(p, o, 2)), code: Int(p[o + 2]), atMicros: u(p, o + 3, 8)) }
    }

    /// The frame types received, in order (a frame sent again counts once).
    public var types: [UInt8] {
        var seen: Set<UInt16> = []
        return received.withLock { $0 }.filter { seen.insert($0.nonce).inserted }.map(\.type)
    }

    private func u(_ p: [UInt8], _ o: Int, _ n: Int) -> UInt64 { (0..<n).reduce(0) { $0 | UInt64(p[o + $1]) << (8 * UInt64($1)) } }

    private func entries<T>(of type: UInt8, size: Int, _ read: ([UInt8], Int) -> T) -> [T] {
        var seen: Set<UInt16> = []
        var out: [T] = []
        for f in received.withLock({ $0 }) where f.type == type && seen.insert(f.nonce).inserted {
            for i in 0..<Int(f.payload[0]) { out.append(read(f.payload, 1 + i * size)) }
        }
        return out
    }

    private func send(_ type: UInt8, nonce: UInt16, _ payload: [UInt8], corrupt: Bool) {
        PeerFrames.write(master, [1, type, UInt8(nonce & 255), UInt8(nonce >> 8)] + payload, corrupt: corrupt ? 1 : nil)
    }

    private func serve() {
        var index = 0
        var scripted: Set<UInt16> = []
        PeerFrames.read(master, running: { running.load(ordering: .relaxed) }, stopAtEnd: false, quiet: { quiet.add(1, ordering: .relaxed) }) { body in
            guard body.count >= 4 else { return }
            let frame = Received(type: body[1], nonce: UInt16(body[2]) | UInt16(body[3]) << 8, payload: Array(body[4...]))
            received.withLock { $0.append(frame) }
            // The script is of the distinct frames other than STATUS, which is always answered;
            // a frame sent again (its nonce seen: the host's retry — under load, of one whose
            // answer was only late) is always answered and takes no step of the script.
            let first = frame.type != 0x13 && scripted.insert(frame.nonce).inserted
            let answer = first && index < script.count ? script[index] : .answer
            if first { index += 1 }
            guard answer != .drop else { return }
            if frame.type == 0x01 {
                send(0x81, nonce: frame.nonce, [1, UInt8(modules & 255), UInt8(modules >> 8), led ? 1 : 0, 0], corrupt: answer == .corrupt)
            } else if frame.type == 0x13 {
                // state, flap, missed_home u16, unexpected_home u16, crc_errors u16
                var count = modules
                var report = (0..<modules).flatMap { faulty.contains($0) ? [3, 0, 4, 0, 1, 0, 0, 0] : [0, 0, 0, 0, 0, 0, 0, 0] as [UInt8] }
                if let given = standing.withLock({ s in s.count > 1 ? s.removeFirst() : s.first }) {
                    count = given.count
                    report = given.flatMap { [$0.state, $0.flap, 0, 0, 0, 0, 0, 0] }
                    var bits = [UInt8](repeating: 0, count: (given.count + 7) / 8)
                    for (m, g) in given.enumerated() where g.moving { bits[m / 8] |= 1 << UInt8(m % 8) }
                    report += bits
                }
                send(0x93, nonce: frame.nonce, [UInt8(count & 255), UInt8(count >> 8)] + report, corrupt: answer == .corrupt)
            } else {
                send(0x80, nonce: frame.nonce, [0], corrupt: answer == .corrupt)
            }
        }
    }
}
