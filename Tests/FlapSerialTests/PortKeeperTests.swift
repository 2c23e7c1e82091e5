import Synchronization
import Testing
import TestWaits
@testable import FlapSerial

/// Issue 13, item 3: a port that keeps failing to open is logged once until the failure
/// changes — told apart by its operation and errno, not by the words of its message.
@Suite struct PortKeeperTests {
    @Test func aFailureIsLoggedOnceUntilItsCauseChanges() async {
        // Each attempt fails; the words change every time, the cause only twice.
        let failures = [SerialError(.open, "cannot open /dev/x: busy (1)", errno: 16),
                        SerialError(.open, "cannot open /dev/x: busy (2)", errno: 16),
                        SerialError(.open, "cannot open /dev/x: denied", errno: 13),
                        SerialError(.open, "cannot open /dev/x: denied, again", errno: 13),
                        SerialError(.find, "no serial port /dev/x", errno: 2)]
        let attempts = Mutex(0), logged = Mutex<[String]>([])
        await offPool {  // it pauses a second between attempts
            let keeper = PortKeeper(
                name: "bus",
                open: { () throws(SerialError) -> any SerialTransport in
                    throw failures[attempts.withLock { n in defer { n += 1 }; return n }]
                },
                log: { line in logged.withLock { $0.append(line) } },
                running: { attempts.withLock { $0 < failures.count } })
            keeper.run(serve: { _, _ in }, connected: { _ in }, failed: {})
        }
        #expect(logged.withLock { $0 } == ["bus: cannot open /dev/x: busy (1)", "bus: cannot open /dev/x: denied", "bus: no serial port /dev/x"])
    }
}
