#define _GNU_SOURCE
#include "CBenchSupport.h"
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
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

static double now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/// One run: posix_spawn `/bin/cat` with stdin and stdout pipes, write the
/// input, read stdout to EOF, waitpid. The pipes are close-on-exec so that
/// a child spawned by another thread meanwhile does not hold this one's
/// stdout open (dup2 onto 0 and 1 clears the flag in the child).
static void bench_run_cat(const unsigned char *input, size_t length) {
    static char *const argv[] = {"/bin/cat", NULL};
    unsigned char buffer[4096];
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) bench_fail("pipe2");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
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

double bench_plain_spawn_loop(int count, const unsigned char *input, size_t length) {
    double start = now_seconds();
    for (int run = 0; run < count; run++) bench_run_cat(input, length);
    return count / (now_seconds() - start);
}

struct bench_shared {
    atomic_int next;
    int count;
    const unsigned char *input;
    size_t length;
};

static void *bench_worker(void *argument) {
    struct bench_shared *shared = argument;
    while (atomic_fetch_add(&shared->next, 1) < shared->count) bench_run_cat(shared->input, shared->length);
    return NULL;
}

double bench_plain_spawn_threads(int count, int threads, const unsigned char *input, size_t length) {
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    struct bench_shared shared = {.count = count, .input = input, .length = length};
    atomic_init(&shared.next, 0);
    pthread_t workers[64];
    double start = now_seconds();
    for (int i = 0; i < threads; i++)
        if (pthread_create(&workers[i], NULL, bench_worker, &shared) != 0) bench_fail("pthread_create");
    for (int i = 0; i < threads; i++) pthread_join(workers[i], NULL);
    return count / (now_seconds() - start);
}
