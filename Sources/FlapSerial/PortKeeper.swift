import FlapClock
#if canImport(Glibc)
import Glibc
#endif

/// The life of a serial port on a link's thread: open it, serve it until it fails, close it,
/// wait a second and open it again — until the link stops. A problem opening is logged once
/// until it changes (a missing adapter does not flood the log).
struct PortKeeper {
    let name: String
    let open: @Sendable () throws(SerialError) -> any SerialTransport
    let log: @Sendable (String) -> Void
    let running: () -> Bool

    /// `serve` runs while the port works; `reopened` is true after a failure (resync then).
    /// `connected` tells the link's counters; `failed` counts a failure.
    func run(serve: (any SerialTransport, _ reopened: Bool) throws(SerialError) -> Void,
             connected: (Bool) -> Void, failed: () -> Void) {
        var everConnected = false
        var lastProblem: SerialError?
        while running() {
            let transport: any SerialTransport
            do { transport = try open() } catch {
                if !error.isSame(as: lastProblem) { log("\(name): \(error)"); lastProblem = error }
                pause(seconds: 1)
                continue
            }
            lastProblem = nil
            connected(true)
            do { try serve(transport, everConnected) } catch {
                log("\(name): \(error); reopening every second")
                failed()
            }
            everConnected = true
            connected(false)
            transport.close()
            if running() { pause(seconds: 1) }
        }
    }

    private func pause(seconds: Double) {
        let end = MonotonicClock.now() + Int64(seconds * 1e9)
        while running(), MonotonicClock.now() < end { usleep(20_000) }
    }
}
