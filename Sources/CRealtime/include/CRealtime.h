// Thin shim: Linux calls the timing threads need that Swift's Glibc module does not import.
#pragma once
#ifdef __linux__
#include <sys/prctl.h>
/// Sets the calling thread's timer slack (how late the kernel may wake it), in nanoseconds.
static inline int flap_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}
/// Names the calling thread (what `ps -L` shows; the kernel keeps 15 bytes).
static inline int flap_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
#else
static inline int flap_set_timer_slack(unsigned long nanoseconds) { (void)nanoseconds; return 0; }
static inline int flap_set_thread_name(const char *name) { (void)name; return 0; }
#endif

#include <stdint.h>
/// A 64-bit counter in memory several threads share (a mapped file's): one writer adds with a
/// relaxed atomic add (no fence, no system call), readers load it relaxed — never torn, never a
/// data race.
static inline void flap_counter_add(uint64_t *counter, uint64_t n) { __atomic_fetch_add(counter, n, __ATOMIC_RELAXED); }
static inline uint64_t flap_counter_load(const uint64_t *counter) { return __atomic_load_n(counter, __ATOMIC_RELAXED); }

#ifdef __linux__
#include <spawn.h>
/// Adds to `actions` the closing, in the child, of every descriptor from `from` on (glibc's
/// posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module does not import).
int flap_spawn_close_from(posix_spawn_file_actions_t *actions, int from);
#endif
