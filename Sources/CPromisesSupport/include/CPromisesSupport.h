#ifndef CPROMISESSUPPORT_H
#define CPROMISESSUPPORT_H

/* What the Promises library needs from C: a thread-local pointer, read with
   one load (Swift has no thread-local variables), and globals read with one
   load rather than through a lazily initialised Swift global (whose
   once-check is a call, and a call makes the optimiser retain whatever
   object the caller has borrowed across it). */

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

/* Whether Promises may hand work to libdispatch with dispatch_async_f
   (DirectDispatch): 0 not yet checked, 1 yes, 2 no. Written by each thread
   that finds it 0, all with the same answer (a once-initialised Swift
   global's). */
extern int promises_direct_dispatch_state;

static inline int promises_direct_dispatch_get(void) {
    return __atomic_load_n(&promises_direct_dispatch_state, __ATOMIC_ACQUIRE);
}

static inline void promises_direct_dispatch_set(int state) {
    __atomic_store_n(&promises_direct_dispatch_state, state, __ATOMIC_RELEASE);
}

#endif
