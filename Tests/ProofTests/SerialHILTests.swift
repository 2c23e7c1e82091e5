import FlapSerialTesting
import EndToEndSupport
import Foundation
import Testing
import TestWaits
#if canImport(Glibc)
import Glibc
#endif

/// libserialport against a real kernel UART: `flapserial` runs inside a QEMU guest (Debian's
/// kernel, its 16550 driver) on /dev/ttyS1, whose other end is a unix socket here, where a
/// scripted splitflap display reads the frames (with the independent decoder) and answers.
@Suite struct SerialHILTests {
    @Test(.timeLimit(.minutes(45)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func libserialportDrivesADisplayThroughAGuestUART() async throws {
        let dir = try scratchDirectory("flap-hil")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let guest = try await QEMUGuest(dir: dir, script: """
            /flapserial --port /dev/ttyS1 --baud 230400 --targets 8,1,0,51 --retry-ms 300 --timeout 120
            echo FLAPSERIAL-EXIT $?
            """, files: [QEMUGuest.sibling("flapserial")])

        let socket = dir + "/uart1.sock"
        let qemu = try guest.boot(memoryMB: 768, extra: ["-chardev", "socket,id=u1,path=\(socket),server=on,wait=on", "-serial", "chardev:u1"])
        // QEMU waits for us on the socket before it boots the guest.
        #expect(await eventually { FileManager.default.fileExists(atPath: socket) })
        let fd = try connectUnix(socket)
        // The first frame goes unanswered (so the retry crosses the UART too); the second is
        // answered with a module report and the acknowledgement.
        let display = ScriptedDisplay(descriptor: fd, [.drop, .stateThenAck])
        defer { display.stop(); close(fd) }

        // The guest powers off when its script ends; QEMU exits then (-no-reboot).
        #expect(await qemu.waitForSlowExit() == 0, "\(qemu.stdout)\n\(qemu.stderr)")
        // The guest's console ends its lines with \r\n.
        let console = qemu.stdout.components(separatedBy: .newlines)
        #expect(console.contains("FLAPSERIAL-EXIT 0"), "\(qemu.stdout)")
        let line = try #require(console.first { $0.hasPrefix("FLAPSERIAL {") })
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst("FLAPSERIAL ".count).utf8)) as? [String: Any])
        #expect(report["acknowledged"] as? Bool == true)
        #expect((report["retries"] as? Int ?? 0) >= 1)
        #expect(report["crc_errors"] as? Int == 0)
        let modules = report["modules"] as? [[String: Any]]
        #expect(modules?.first?["state"] as? String == "sensorError" && modules?.first?["missed_home"] as? Int == 2)
        // What crossed the UART, read by the independent decoder: the same frame twice.
        let frames = display.received.withLock { $0 }
        #expect(frames.count >= 2 && frames.allSatisfy { $0.flaps == [8, 1, 0, 51] }, "\(frames)")
        #expect(frames.count >= 2 && frames[0].nonce == frames[1].nonce)
    }

    /// Connects to QEMU's socket. QEMU makes the file before it listens, so a loaded machine can
    /// refuse the first tries: they are repeated for up to 120 s (a bound against a hang).
    func connectUnix(_ path: String) throws -> Int32 {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { p in for (i, b) in path.utf8.enumerated() { p[i] = b } }
        let end = Date().addingTimeInterval(120)
        while true {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            if rc == 0 { return fd }
            let why = errno
            close(fd)
            guard why == ECONNREFUSED || why == ENOENT, Date() < end else {
                throw HarnessError("cannot connect to \(path): \(String(cString: strerror(why)))")
            }
            usleep(10_000)
        }
    }
}
