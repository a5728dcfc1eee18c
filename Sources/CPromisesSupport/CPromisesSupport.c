#define _GNU_SOURCE
#include <dlfcn.h>

#include "CPromisesSupport.h"

__thread void *promises_thread_state __attribute__((tls_model("initial-exec"))) = 0;

int promises_direct_dispatch_state = 0;

promises_tsan_annotation promises_tsan_acquire_hook = 0;
promises_tsan_annotation promises_tsan_release_hook = 0;

/* RTLD_DEFAULT searches the whole process; ThreadSanitizer's runtime
   exports its interface, so this finds it however it was linked. */
__attribute__((constructor))
static void promises_find_tsan_hooks(void) {
    promises_tsan_acquire_hook = (promises_tsan_annotation)dlsym(RTLD_DEFAULT, "__tsan_acquire");
    promises_tsan_release_hook = (promises_tsan_annotation)dlsym(RTLD_DEFAULT, "__tsan_release");
}
