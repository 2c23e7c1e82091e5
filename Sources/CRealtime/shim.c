#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "CRealtime.h"

long long flap_thread_runqueue_wait(void) {
#ifdef __linux__
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[96];
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return -1;
    buffer[n] = 0;
    unsigned long long running = 0, waiting = 0;
    return sscanf(buffer, "%llu %llu", &running, &waiting) == 2 ? (long long)waiting : -1;
#else
    return -1;
#endif
}
