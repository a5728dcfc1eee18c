#include "CBenchSupport.h"
#include <malloc.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

size_t bench_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks;
}

static void bench_fail(const char *what) {
    perror(what);
    abort();
}

double bench_plain_spawn_loop(int count, const unsigned char *input, size_t length) {
    char *argv[] = {"/bin/cat", NULL};
    unsigned char buffer[4096];
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int run = 0; run < count; run++) {
        int in[2], out[2];
        if (pipe(in) != 0 || pipe(out) != 0) bench_fail("pipe");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, in[0], 0);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_addclose(&actions, in[0]);
        posix_spawn_file_actions_addclose(&actions, in[1]);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        posix_spawn_file_actions_addclose(&actions, out[1]);
        pid_t pid;
        int rc = posix_spawn(&pid, "/bin/cat", &actions, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
        if (rc != 0) bench_fail("posix_spawn");
        close(in[0]);
        close(out[1]);
        if (write(in[1], input, length) != (ssize_t)length) bench_fail("write");
        close(in[1]);
        size_t total = 0;
        ssize_t n;
        while ((n = read(out[0], buffer, sizeof buffer)) > 0) total += (size_t)n;
        close(out[0]);
        int status;
        if (waitpid(pid, &status, 0) != pid) bench_fail("waitpid");
        if (total != length) bench_fail("cat's output");
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    return count / seconds;
}
