#ifndef CBENCHSUPPORT_H
#define CBENCHSUPPORT_H
#include <stddef.h>
/// Bytes malloc has handed out and not yet had back (mallinfo2's uordblks):
/// real chunk sizes, headers and rounding included.
size_t bench_heap_bytes_in_use(void);
#endif
