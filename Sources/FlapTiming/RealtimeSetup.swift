#if canImport(Glibc)
import Glibc
#endif
import CRealtime

/// Applies the conductor's real-time options to the calling thread.
enum RealtimeSetup {
    static func apply(_ options: Conductor.Realtime) -> [String] {
        var warnings: [String] = []
        #if canImport(Glibc)
        // The kernel may defer a sleeper's wake-up by its timer slack (50 µs by default): the
        // conductor asks for none.
        _ = flap_set_timer_slack(1)
        if let priority = options.priority {
            var param = sched_param()
            param.sched_priority = priority
            let rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
            if rc != 0 {
                warnings.append("SCHED_FIFO priority \(priority) refused (\(String(cString: strerror(rc)))): "
                    + "the conductor runs at normal priority; grant LimitRTPRIO or CAP_SYS_NICE")
            }
        }
        if options.lockMemory, mlockall(MCL_CURRENT | MCL_FUTURE) != 0 {
            warnings.append("mlockall refused (\(String(cString: strerror(errno)))): memory stays pageable; "
                + "grant LimitMEMLOCK or CAP_IPC_LOCK")
        }
        #endif
        return warnings
    }
}
