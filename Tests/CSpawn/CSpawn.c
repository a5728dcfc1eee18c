#define _GNU_SOURCE
#include "CSpawn.h"
#include <fcntl.h>
#include <unistd.h>

int spawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int spawn_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}
