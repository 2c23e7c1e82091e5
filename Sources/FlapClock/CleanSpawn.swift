import CRealtime
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

/// Adds to a child's file actions — last, after its own `dup2`s onto 0, 1 and 2 — the closing of
/// every other descriptor. swift-nio accepts connections without `SOCK_CLOEXEC`, so a child
/// spawned beside a server in the same process inherits its open connections and holds them
/// after the server has closed them: the peer never sees the end (a test's idle keep-alive
/// connection stayed open for as long as a flapd spawned by another test lived).
public func closeOtherDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    _ = flap_spawn_close_from(&actions, 3)
}
