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
