#include "CPromisesSupport.h"

__thread void *promises_thread_state __attribute__((tls_model("initial-exec"))) = 0;

int promises_direct_dispatch_state = 0;

