import FlapSerial
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A bus of salvaged station modules on the far end of a pseudo-terminal pair: it only listens
/// (neither protocol answers a move) and keeps every byte, for the independent decoders.
public final class StationPeer: @unchecked Sendable {
    /// Every byte the host wrote, in order.
    public let received = Mutex<[UInt8]>([])
    /// The host's end when the host is this process (nil with `init(device:)`).
    public let host: TermiosPort?
    /// The device another process opens (with `init(device:)`).
    public let devicePath: String?
    private let listening: Int32
    private let kept: Int32
    private let running = Atomic(true)
    private let quiet = Atomic(0)

    /// How many times the peer has found nothing to read for 50 ms: once it has grown by two
    /// since a writer ended, every byte that writer wrote has been received.
    public var quietSpells: Int { quiet.load(ordering: .relaxed) }
    private var thread: Thread?

    /// `device`: the host is another process, which opens `devicePath`; else this one, on `host`.
    public init(device: Bool = false) throws {
        let (master, slave) = try PseudoTerminal.open()
        if device {
            devicePath = slavePath(slave: slave)
            host = nil
            listening = master
            kept = slave  // so the master does not read EIO before the other process opens it
        } else {
            devicePath = nil
            host = TermiosPort(descriptor: master)
            listening = slave
            kept = -1
        }
        thread = Thread { [self] in listen() }
        thread?.start()
    }

    /// Closes the modules' end, as an unplugged adapter would.
    public func hangUp() {
        running.store(false, ordering: .relaxed)
        while thread?.isFinished == false { usleep(1000) }
        close(listening)
        if kept >= 0 { close(kept) }
    }

    deinit { running.store(false, ordering: .relaxed) }

    private func listen() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while running.load(ordering: .relaxed) {
            var p = pollfd(fd: listening, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { quiet.add(1, ordering: .relaxed); continue }
            let n = buffer.withUnsafeMutableBytes { read(listening, $0.baseAddress, $0.count) }
            if n > 0 { received.withLock { $0 += buffer[0..<n] } } else { usleep(10_000) }  // hung up: no spin
        }
    }
}

/// Pseudo-terminal pairs for scripted peers.
enum PseudoTerminal {
    /// A new pair, the slave side raw; both ends close-on-exec (a child process another test
    /// spawns meanwhile must not hold the slave open: the master would never see it hang up).
    static func open() throws(SerialError) -> (master: Int32, slave: Int32) {
        let master = Glibc.open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw SerialError(.open, "cannot open /dev/ptmx: \(String(cString: strerror(errno)))", errno: errno) }
        // Unlock the slave (TIOCSPTLCK) and open it through the master (TIOCGPTPEER, Linux 4.13;
        // the values are asm-generic's, the same on x86_64 and arm64): Glibc's module has neither
        // unlockpt nor ptsname_r.
        var unlocked: Int32 = 0
        let slave = ioctl(master, 0x4004_5431, &unlocked) == 0 ? ioctl(master, 0x5441, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1
        guard slave >= 0 else { close(master); throw SerialError(.open, "cannot open the pseudo-terminal's slave: \(String(cString: strerror(errno)))", errno: errno) }
        var t = termios()
        tcgetattr(slave, &t)
        cfmakeraw(&t)
        tcsetattr(slave, TCSANOW, &t)
        return (master, slave)
    }
}
