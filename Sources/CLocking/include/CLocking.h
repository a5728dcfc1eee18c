#ifndef CLOCKING_H
#define CLOCKING_H

/* ThreadSanitizer's annotation functions, or null outside ThreadSanitizer.
   Looked up with dlsym once, by a constructor that runs when the library is
   loaded (before main, while the process has one thread), and never written
   again. C globals, read with one load: a lazily initialised Swift global
   would cost a call (its once-check) on each side of every lock. */
typedef void (*locking_tsan_annotation)(void *addr);
extern locking_tsan_annotation locking_tsan_acquire_hook;
extern locking_tsan_annotation locking_tsan_release_hook;

/* The hooks as plain pointers, for tests. */
static inline void *locking_tsan_acquire_hook_address(void) {
    return (void *)locking_tsan_acquire_hook;
}

static inline void *locking_tsan_release_hook_address(void) {
    return (void *)locking_tsan_release_hook;
}

/* Tells ThreadSanitizer that the lock named by `addr` was taken: what its
   last holder did happens before what follows. A load and a branch outside
   ThreadSanitizer. */
static inline void locking_tsan_acquire(void *addr) {
    locking_tsan_annotation hook = locking_tsan_acquire_hook;
    if (hook) hook(addr);
}

/* Tells ThreadSanitizer the lock named by `addr` is about to be released. */
static inline void locking_tsan_release(void *addr) {
    locking_tsan_annotation hook = locking_tsan_release_hook;
    if (hook) hook(addr);
}

#endif
