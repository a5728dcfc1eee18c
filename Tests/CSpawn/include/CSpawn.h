#ifndef CSPAWN_H
#define CSPAWN_H
#include <spawn.h>

// glibc functions Swift's Glibc module does not show (they are declared
// under _GNU_SOURCE only), for Tests/Spawn.

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34): the child closes
/// every descriptor from `lowest` up.
int spawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowest);

/// posix_spawn_file_actions_addchdir_np (glibc 2.29): the child enters `path`.
int spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path);

/// pipe2(fds, O_CLOEXEC): both ends close-on-exec from the start.
int spawn_pipe_cloexec(int fds[2]);

#endif
