import FlapSerial
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A scripted flapbus controller on the controlling side of a pseudo-terminal pair, for another
/// process to open at `devicePath`: reads frames with the independent decoder, records them, and
/// answers HELLO with INFO and everything else with ACK — or drops or corrupts the answer as told.
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

    public let devicePath: String
    public let received = Mutex<[Received]>([])
    private let master: Int32, slave: Int32
    private let script: [Answer]
    private let modules: Int
    private let running = Atomic(true)
    private var thread: Thread?

    public init(modules: Int, _ script: [Answer] = []) throws {
        let (m, s) = try PseudoTerminal.open()
        master = m
        slave = s
        devicePath = slavePath(slave: s)
        self.modules = modules
        self.script = script
        thread = Thread { [self] in serve() }
        thread?.start()
    }

    public func stop() { running.store(false, ordering: .relaxed) }

    /// Every MOVE entry received, in order (a frame sent again counts once).
    public var moves: [Move] {
        var seen: Set<UInt16> = []
        var out: [Move] = []
        for f in received.withLock({ $0 }) where f.type == 0x10 && seen.insert(f.nonce).inserted {
            let p = f.payload
            func u(_ o: Int, _ n: Int) -> UInt64 { (0..<n).reduce(0) { $0 | UInt64(p[o + $1]) << (8 * UInt64($1)) } }
            for i in 0..<Int(p[0]) {
                let o = 1 + i * 13
                out.append(Move(module: Int(u(o, 2)), flap: Int(p[o + 2]), startMicros: u(o + 3, 8), flipMs: Int(u(o + 11, 2))))
            }
        }
        return out
    }

    private func send(_ type: UInt8, nonce: UInt16, _ payload: [UInt8], corrupt: Bool) {
        PeerFrames.write(master, [1, type, UInt8(nonce & 255), UInt8(nonce >> 8)] + payload, corrupt: corrupt ? 1 : nil)
    }

    private func serve() {
        var index = 0
        PeerFrames.read(master, running: { running.load(ordering: .relaxed) }, stopAtEnd: false) { body in
            guard body.count >= 4 else { return }
            let frame = Received(type: body[1], nonce: UInt16(body[2]) | UInt16(body[3]) << 8, payload: Array(body[4...]))
            received.withLock { $0.append(frame) }
            let answer = index < script.count ? script[index] : .answer
            index += 1
            guard answer != .drop else { return }
            if frame.type == 0x01 {
                send(0x81, nonce: frame.nonce, [1, UInt8(modules & 255), UInt8(modules >> 8), 0, 0], corrupt: answer == .corrupt)
            } else {
                send(0x80, nonce: frame.nonce, [0], corrupt: answer == .corrupt)
            }
        }
    }
}
