// Debian's SQLite 3 (libsqlite3-dev), for flaphub's store (Sources/FlapHub/Store/SQLiteHandle.swift).
#include <sqlite3.h>

// SQLITE_TRANSIENT is a function pointer made from -1, which Swift cannot import: bound text is
// copied by SQLite before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

// Before the first connection: no count of SQLite's memory in use (kept under one lock for the
// whole process on every allocation; flaphub never asks for it).
static inline int csqlite_configure(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
