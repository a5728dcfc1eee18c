#ifndef CPROMISESSUPPORT_H
#define CPROMISESSUPPORT_H

/* What the Promises library needs from C: ThreadSanitizer's annotations and
   a thread-local pointer, both at the cost of a load and a branch. (Swift has
   neither weak symbols nor thread-local variables.) */

/* ThreadSanitizer's runtime defines these; declared weak, they are null in a
   process without it. */
void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));

/* Tells ThreadSanitizer that a lock named by `addr` was taken: what its last
   holder did happens before what follows. Nothing outside ThreadSanitizer. */
static inline void promises_tsan_acquire(void *addr) {
    if (__tsan_acquire) __tsan_acquire(addr);
}

/* Tells ThreadSanitizer the lock named by `addr` is about to be released. */
static inline void promises_tsan_release(void *addr) {
    if (__tsan_release) __tsan_release(addr);
}

/* The calling thread's drain state (an unmanaged Swift object), or null.
   Initial-exec: one load relative to the thread pointer, where the general
   model calls __tls_get_addr. (That model is for libraries loaded with
   dlopen; glibc reserves static TLS space for a pointer's worth.) */
extern __thread void *promises_thread_state __attribute__((tls_model("initial-exec")));

static inline void *promises_thread_state_get(void) {
    return promises_thread_state;
}

static inline void promises_thread_state_set(void *state) {
    promises_thread_state = state;
}

#endif
