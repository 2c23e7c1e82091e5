#if canImport(Glibc)
import Glibc
#endif

/// Spawn attributes by which a child starts with no signal blocked and every signal at its
/// default. Needed whenever a child may be spawned from a dispatch worker — every Swift task runs
/// on one — which blocks SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGCHLD and more: `posix_spawn` (and
/// Foundation's `Process`) hand that mask on, and a child that inherited it (Mosquitto) never
/// stopped at SIGTERM.
public func withCleanSignals<T>(_ body: (inout posix_spawnattr_t) -> T) -> T {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t(), all = sigset_t()
    sigemptyset(&none)
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    return body(&attributes)
}
