#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CLOCK_MONOTONIC in nanoseconds: the one timeline of the conductor and its outputs.
public enum MonotonicClock {
    @inline(__always)
    public static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Sleeps until the absolute instant with `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`.
    @inline(__always)
    public static func sleep(until deadline: Int64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        #if canImport(Glibc)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
        #else
        let delta = deadline - now()
        if delta > 0 { usleep(UInt32(delta / 1000)) }
        _ = ts
        #endif
    }
}
