#define _GNU_SOURCE
#include "CRealtime.h"

#ifdef __linux__
#include <spawn.h>
int flap_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
#endif
