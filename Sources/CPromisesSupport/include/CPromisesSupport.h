#ifndef CPROMISESSUPPORT_H
#define CPROMISESSUPPORT_H

/* What the Promises library needs from C: a thread-local pointer, read with
   one load. (Swift has no thread-local variables.) */

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
