// Thin shim over <sqlite3.h> (libsqlite3-dev).
#pragma once
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline void (*flap_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
