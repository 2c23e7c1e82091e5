import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Waits for tests that never hold a thread of Swift's concurrency pool. The pool has one thread
// a core — two on the machines this project is tested on — and Swift Testing runs every test
// function on it, synchronous ones included: a test that blocks (a `usleep` poll, a semaphore)
// holds one of the two for as long as it waits, and every in-process server and async test of
// the suite runs on what is left. Two such tests at once stopped the whole suite's async work
// for seconds at a time (seen in `gdb`: both pool threads in `WebFeedChurnTests`' semaphore and
// `GPIODriverTests`' poll while `LocalHTTPServerTests`' server waited for a thread).

/// Polls `condition` every millisecond, on a thread of its own, until it holds (true) or
/// `seconds` have passed (false); the test's task waits suspended. The bound is only against a
/// hang, never a measure of speed.
public func eventually(within seconds: Double = 120, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
    await offPool { poll(within: seconds, condition) }
}

/// `eventually` for a condition that must itself wait (a query to a database): asked every
/// millisecond from the test's task until it holds (true) or `seconds` have passed (false).
public func eventually(within seconds: Double = 120, asking condition: @Sendable () async -> Bool) async -> Bool {
    let end = ContinuousClock.now + .seconds(seconds)
    while await !condition() {
        if ContinuousClock.now > end { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// `eventually`'s poll, blocking: for inside `offPool`, when what follows the condition must
/// happen within a window of a few hundred milliseconds. A task resumed after `eventually` waits
/// for a free thread of the pool, which in a whole test run can take longer than that.
public func poll(within seconds: Double = 120, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > end { return false }
        usleep(1000)
    }
    return true
}

/// Runs blocking `body` (a semaphore's wait, a thread's join) on a thread of its own and hands
/// its result back to the awaiting test.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in Thread { continuation.resume(returning: body()) }.start() }
}

/// A TCP connection to 127.0.0.1:`port` whose reads give up after 60 s (a bound against a hang
/// on a starved machine); nil when it cannot connect. The caller closes it.
public func loopbackConnection(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var timeout = timeval(tv_sec: 60, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { close(fd); return nil }
    return fd
}
