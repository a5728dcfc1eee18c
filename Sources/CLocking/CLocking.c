#define _GNU_SOURCE
#include <dlfcn.h>

#include "CLocking.h"

locking_tsan_annotation locking_tsan_acquire_hook = 0;
locking_tsan_annotation locking_tsan_release_hook = 0;

/* RTLD_DEFAULT searches the whole process; ThreadSanitizer's runtime
   exports its interface, so this finds it however it was linked. */
__attribute__((constructor))
static void locking_find_tsan_hooks(void) {
    locking_tsan_acquire_hook = (locking_tsan_annotation)dlsym(RTLD_DEFAULT, "__tsan_acquire");
    locking_tsan_release_hook = (locking_tsan_annotation)dlsym(RTLD_DEFAULT, "__tsan_release");
}
