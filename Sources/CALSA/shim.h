// Thin shim over <alsa/asoundlib.h> (libasound2-dev).
#pragma once
#include <alsa/asoundlib.h>

static void flap_alsa_silent(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/// Stops alsa-lib printing its own errors to stderr; the caller reports them instead.
static inline void flap_alsa_quiet(void) { snd_lib_error_set_handler(flap_alsa_silent); }
