// Thin shim over <gpiod.h>: one small API over libgpiod v1 (1.6, Debian / Raspberry Pi OS
// bookworm) and v2 (2.x, trixie), told apart at compile time (GPIOD_LINE_BULK_MAX_LINES exists
// only in v1). A request is a set of lines of one chip, all outputs or all inputs.
#pragma once
#include <gpiod.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define FLAP_GPIOD_V1 1
#endif

/// Bias of input lines: 0 none, 1 pull-up, 2 pull-down.
typedef struct flap_gpio_request {
    struct gpiod_chip *chip;
    unsigned count;
#ifdef FLAP_GPIOD_V1
    struct gpiod_line_bulk bulk;
#else
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *events;
    unsigned offsets[64];
#endif
} flap_gpio_request;

/// "v1" or "v2": which libgpiod API this was built against.
static inline const char *flap_gpio_api(void) {
#ifdef FLAP_GPIOD_V1
    return "v1";
#else
    return "v2";
#endif
}

/// The chip's number of lines, or -1 with errno (ENOENT: no such chip, EACCES: no permission).
static inline int flap_gpio_chip_lines(const char *path) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return -1;
#ifdef FLAP_GPIOD_V1
    int n = (int)gpiod_chip_num_lines(chip);
#else
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    int n = info ? (int)gpiod_chip_info_get_num_lines(info) : -1;
    if (info) gpiod_chip_info_free(info);
#endif
    gpiod_chip_close(chip);
    return n;
}

/// Requests `count` (≤ 64) lines of the chip at `path`: outputs at `initial` (0 or 1 each; NULL:
/// all low) from the moment the kernel grants them — never another level first — or inputs with
/// `bias` and both edges watched. NULL with errno on failure (EBUSY: a line is taken).
static inline flap_gpio_request *flap_gpio_request_lines(const char *path, const unsigned *offsets, unsigned count,
                                                         int output, const int *initial, int bias, const char *consumer) {
    if (count == 0 || count > 64) { errno = EINVAL; return NULL; }
    flap_gpio_request *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->count = count;
    r->chip = gpiod_chip_open(path);
    if (!r->chip) { int e = errno; free(r); errno = e; return NULL; }
#ifdef FLAP_GPIOD_V1
    if (gpiod_chip_get_lines(r->chip, (unsigned *)offsets, count, &r->bulk) < 0) goto fail;
    int flags = bias == 1 ? GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP : bias == 2 ? GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN : 0;
    int levels[64] = {0};
    for (unsigned i = 0; initial && i < count; i++) levels[i] = initial[i] != 0;
    int rc = output ? gpiod_line_request_bulk_output_flags(&r->bulk, consumer, 0, levels)
                    : gpiod_line_request_bulk_both_edges_events_flags(&r->bulk, consumer, flags);
    if (rc < 0) goto fail;
    return r;
#else
    memcpy(r->offsets, offsets, count * sizeof *offsets);
    struct gpiod_line_settings *s = gpiod_line_settings_new();
    struct gpiod_line_config *lc = gpiod_line_config_new();
    struct gpiod_request_config *rc = gpiod_request_config_new();
    int ok = s && lc && rc;
    if (ok) {
        if (output) {
            gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT);
            gpiod_line_settings_set_output_value(s, GPIOD_LINE_VALUE_INACTIVE);
        } else {
            gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_INPUT);
            gpiod_line_settings_set_edge_detection(s, GPIOD_LINE_EDGE_BOTH);
            gpiod_line_settings_set_bias(s, bias == 1 ? GPIOD_LINE_BIAS_PULL_UP : bias == 2 ? GPIOD_LINE_BIAS_PULL_DOWN : GPIOD_LINE_BIAS_AS_IS);
        }
        gpiod_request_config_set_consumer(rc, consumer);
        ok = gpiod_line_config_add_line_settings(lc, offsets, count, s) == 0;
        if (ok && output) {
            enum gpiod_line_value levels[64];
            for (unsigned i = 0; i < count; i++) levels[i] = initial && initial[i] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
            ok = gpiod_line_config_set_output_values(lc, levels, count) == 0;
        }
        if (ok) r->request = gpiod_chip_request_lines(r->chip, rc, lc);
        ok = ok && r->request;
    }
    int e = errno;
    if (s) gpiod_line_settings_free(s);
    if (lc) gpiod_line_config_free(lc);
    if (rc) gpiod_request_config_free(rc);
    errno = e;
    if (!ok) goto fail;
    if (!output) r->events = gpiod_edge_event_buffer_new(16);
    return r;
#endif
fail:;
    int saved = errno;
    gpiod_chip_close(r->chip);
    free(r);
    errno = saved;
    return NULL;
}

/// Sets every line of an output request at once: `values[i]` for the i-th line (0 or 1).
static inline int flap_gpio_set(flap_gpio_request *r, const int *values) {
#ifdef FLAP_GPIOD_V1
    return gpiod_line_set_value_bulk(&r->bulk, (int *)values);
#else
    enum gpiod_line_value v[64];
    for (unsigned i = 0; i < r->count; i++) v[i] = values[i] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
    return gpiod_line_request_set_values(r->request, v);
#endif
}

/// Reads every line of a request into `values`.
static inline int flap_gpio_get(flap_gpio_request *r, int *values) {
#ifdef FLAP_GPIOD_V1
    return gpiod_line_get_value_bulk(&r->bulk, values);
#else
    enum gpiod_line_value v[64];
    if (gpiod_line_request_get_values(r->request, v) < 0) return -1;
    for (unsigned i = 0; i < r->count; i++) values[i] = v[i] == GPIOD_LINE_VALUE_ACTIVE;
    return 0;
#endif
}

/// Waits up to `timeout_ns` for an edge on an input request and reads one: the index of its line
/// in the request, whether it rose, its kernel timestamp. 1: an edge, 0: none in time, -1: error.
static inline int flap_gpio_read_edge(flap_gpio_request *r, int64_t timeout_ns, unsigned *index, int *rising, uint64_t *ns) {
#ifdef FLAP_GPIOD_V1
    struct timespec ts = { timeout_ns / 1000000000, timeout_ns % 1000000000 };
    struct gpiod_line_bulk ready;
    gpiod_line_bulk_init(&ready);
    int rc = gpiod_line_event_wait_bulk(&r->bulk, &ts, &ready);
    if (rc <= 0) return rc;
    struct gpiod_line *line = gpiod_line_bulk_get_line(&ready, 0);
    struct gpiod_line_event ev;
    if (gpiod_line_event_read(line, &ev) < 0) return -1;
    for (unsigned i = 0; i < r->count; i++) if (gpiod_line_bulk_get_line(&r->bulk, i) == line) *index = i;
    *rising = ev.event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    *ns = (uint64_t)ev.ts.tv_sec * 1000000000ull + (uint64_t)ev.ts.tv_nsec;
    return 1;
#else
    int rc = gpiod_line_request_wait_edge_events(r->request, timeout_ns);
    if (rc <= 0) return rc;
    if (gpiod_line_request_read_edge_events(r->request, r->events, 1) < 1) return -1;
    struct gpiod_edge_event *ev = gpiod_edge_event_buffer_get_event(r->events, 0);
    unsigned offset = gpiod_edge_event_get_line_offset(ev);
    for (unsigned i = 0; i < r->count; i++) if (r->offsets[i] == offset) *index = i;
    *rising = gpiod_edge_event_get_event_type(ev) == GPIOD_EDGE_EVENT_RISING_EDGE;
    *ns = gpiod_edge_event_get_timestamp_ns(ev);
    return 1;
#endif
}

/// Releases the lines (outputs keep their last level) and closes the chip.
static inline void flap_gpio_release(flap_gpio_request *r) {
    if (!r) return;
#ifdef FLAP_GPIOD_V1
    gpiod_line_release_bulk(&r->bulk);
#else
    if (r->events) gpiod_edge_event_buffer_free(r->events);
    if (r->request) gpiod_line_request_release(r->request);
#endif
    gpiod_chip_close(r->chip);
    free(r);
}
