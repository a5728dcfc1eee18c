#ifndef CBENCHSUPPORT_H
#define CBENCHSUPPORT_H
#include <stddef.h>
/// Bytes malloc has handed out and not yet had back (mallinfo2's uordblks):
/// real chunk sizes, headers and rounding included.
size_t bench_heap_bytes_in_use(void);
/// The baseline of the process benchmarks: `count` times, posix_spawn
/// `/bin/cat` with stdin and stdout pipes, write `input`, read stdout to EOF,
/// waitpid — the least a caller must do. Returns runs per second; aborts if
/// a step fails or cat's output is not the input's length.
double bench_plain_spawn_loop(int count, const unsigned char *input, size_t length);
/// The same runs, `count` in all, shared by `threads` threads (at most 64)
/// that each do one run after another. Returns runs per second.
double bench_plain_spawn_threads(int count, int threads, const unsigned char *input, size_t length);
#endif
