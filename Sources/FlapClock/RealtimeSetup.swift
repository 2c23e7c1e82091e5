#if canImport(Glibc)
import Glibc
#endif
import CRealtime

/// Applies the wall's real-time options: to the calling thread (`TimingThreads`), and the
/// memory lock and wake-latency request the conductor holds for the process.
package enum RealtimeSetup {
    /// What `apply` got: whether the thread runs SCHED_FIFO, and a warning for a refusal.
    package struct Granted {
        package var fifo = false
        package var warnings: [String] = []
    }

    /// Asks for no timer slack and, with a priority, SCHED_FIFO for the calling thread.
    package static func apply(priority: Int32?) -> Granted {
        var granted = Granted()
        #if canImport(Glibc)
        // The kernel may defer a sleeper's wake-up by its timer slack (50 µs by default): a
        // timing thread asks for none.
        _ = flap_set_timer_slack(1)
        if let priority {
            var param = sched_param()
            param.sched_priority = priority
            let rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
            if rc == 0 { granted.fifo = true } else {
                granted.warnings.append("SCHED_FIFO priority \(priority) refused (\(String(cString: strerror(rc)))): "
                    + "the timing threads run at normal priority; grant LimitRTPRIO or CAP_SYS_NICE")
            }
        }
        #endif
        return granted
    }

    /// Locks the process's memory (mlockall), or says why not.
    package static func lockMemory() -> String? {
        #if canImport(Glibc)
        guard mlockall(MCL_CURRENT | MCL_FUTURE) != 0 else { return nil }
        return "mlockall refused (\(String(cString: strerror(errno)))): memory stays pageable; grant LimitMEMLOCK or CAP_IPC_LOCK"
        #else
        return "mlockall needs Linux"
        #endif
    }

    package struct Refusal: Error { package var message: String }

    /// Opens a PM QoS request for a CPU wake-up latency; the request lasts while the file
    /// descriptor stays open.
    package static func requestWakeLatency(_ micros: Int32) -> Result<Int32, Refusal> {
        #if canImport(Glibc)
        let fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(Refusal(message: "/dev/cpu_dma_latency refused (\(String(cString: strerror(errno)))): "
                + "CPUs may sleep deeply and wake late; run as root or grant write access"))
        }
        var value = micros
        guard write(fd, &value, 4) == 4 else {
            close(fd)
            return .failure(Refusal(message: "writing /dev/cpu_dma_latency failed: \(String(cString: strerror(errno)))"))
        }
        return .success(fd)
        #else
        return .failure(Refusal(message: "wake-latency requests need Linux"))
        #endif
    }

    package static func release(_ fd: Int32) { close(fd) }

    package static func unlockMemory() {
        #if canImport(Glibc)
        munlockall()
        #endif
    }
}
