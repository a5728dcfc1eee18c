#define _GNU_SOURCE
#include "CProcessSupport.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <string.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/// Moves fd out of 0…2 (as a close-on-exec copy) so the dup2 actions below
/// cannot overwrite one source with another. Stores the copy in *moved.
static int lift_above_stdio(int fd, int *moved) {
    *moved = -1;
    if (fd > 2) return fd;
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (copy >= 0) *moved = copy;
    return copy;
}

/// What the child needs, on the parent's stack (the child shares its memory
/// and the parent waits, CLONE_VFORK, until the child has exec'd or failed).
struct spawn_request {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *cwd;
    int fds[3];
    /// Whether the child gets SIGKILL when the thread that spawns it ends
    /// (PR_SET_PDEATHSIG): set when that thread lives as long as the
    /// process (a spawner thread), so the child dies with jobd.
    int parent_death;
    /// The process the child must still be a child of after arming that
    /// signal (getpid() of jobd).
    long parent_pid;
    /// Set by the child when it fails before or in exec; 0 otherwise.
    volatile int error;
};

/// The child, between clone and exec, on jobd's memory: raw system calls
/// only — no locks, no allocation, and nothing a sanitizer intercepts
/// (its bookkeeping is the parent's memory too). Every signal is blocked
/// on entry (the parent blocked them before clone); handlers are reset
/// before the mask is cleared, so no handler of jobd's can run here.
#if defined(__has_attribute) && __has_attribute(disable_sanitizer_instrumentation)
__attribute__((disable_sanitizer_instrumentation))
#endif
static int spawn_child(void *argument) {
    struct spawn_request *request = argument;
    // The kernel's sigaction, zeroed: SIG_DFL, no flags, an empty mask
    // (static: zeroing a local would call memset, which sanitizers intercept).
    static const unsigned long fallback[4] = {0, 0, 0, 0};
    // Every disposition back to the default: an ignored SIGPIPE or SIGTERM
    // in jobd must not leak into the child (exec resets caught ones only).
    for (long sig = 1; sig <= 64; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        syscall(SYS_rt_sigaction, sig, fallback, NULL, 8L);
    }
    if (syscall(SYS_setpgid, 0L, 0L) != 0) goto fail;
    if (request->parent_death) {
        if (syscall(SYS_prctl, (long)PR_SET_PDEATHSIG, (long)SIGKILL, 0L, 0L, 0L) != 0) goto fail;
        // jobd died before the signal was armed: the child was handed to
        // another parent already, and must not run on alone.
        if (syscall(SYS_getppid) != request->parent_pid) syscall(SYS_exit, 127L);
    }
    if (request->cwd != NULL && syscall(SYS_chdir, request->cwd) != 0) goto fail;
    // The sources are above 2 (lift_above_stdio), so no dup3 overwrites
    // another's source; the copies on 0/1/2 are not close-on-exec.
    for (long i = 0; i < 3; i++)
        if (syscall(SYS_dup3, (long)request->fds[i], i, 0L) != i) goto fail;
    if (syscall(SYS_close_range, 3L, (long)~0U, 0L) != 0) {
        // Linux < 5.9: close one by one, up to the descriptor limit.
        struct rlimit limit;
        long top = syscall(SYS_getrlimit, (long)RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
            ? (long)limit.rlim_cur : 65536;
        for (long fd = 3; fd < top; fd++) syscall(SYS_close, fd);
    }
    static const unsigned long empty = 0;
    if (syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &empty, NULL, 8L) != 0) goto fail;
    syscall(SYS_execve, request->path, request->argv, request->envp);
fail:
    request->error = errno != 0 ? errno : ECHILD;
    syscall(SYS_exit, 127L);
    return 127;
}

#ifdef __GLIBC__
// glibc's own name for clone(2)'s wrapper. ThreadSanitizer intercepts
// `clone` and runs its fork bookkeeping in the child, which on a child
// sharing our memory (CLONE_VM) corrupts the parent's; `__clone` is the
// same function, not intercepted.
extern int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
#define jobd_clone __clone
#else
#define jobd_clone clone
#endif

/// Spawns on the calling thread (see jobd_spawn); `parent_death` arms
/// PR_SET_PDEATHSIG in the child, for a thread that never ends before the
/// process does.
static int spawn_here(const char *path, char *const argv[], char *const envp[],
                      const char *cwd, int in_fd, int out_fd, int err_fd,
                      int parent_death, pid_t *pid_out, int *pidfd_out) {
    int moved[3];
    struct spawn_request request = {
        .path = path, .argv = argv, .envp = envp, .cwd = cwd,
        .fds = {
            lift_above_stdio(in_fd, &moved[0]),
            lift_above_stdio(out_fd, &moved[1]),
            lift_above_stdio(err_fd, &moved[2]),
        },
        .parent_death = parent_death,
        .parent_pid = (long)getpid(),
        .error = 0,
    };
    int result = 0;
    *pidfd_out = -1;
    if (request.fds[0] < 0 || request.fds[1] < 0 || request.fds[2] < 0) {
        result = errno;
        goto out;
    }
    // The child runs on this frame's array while this thread waits (as
    // musl's posix_spawn does): no stack to map and unmap per child.
    _Alignas(16) char stack[16384];
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int pidfd = -1;
    int flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
    pid_t pid = jobd_clone(spawn_child, stack + sizeof stack, flags | CLONE_PIDFD, &request, &pidfd);
    // Linux < 5.2 has no CLONE_PIDFD, and the pidfd needs a free
    // descriptor: spawn without it then (the caller polls for the exit).
    if (pid == -1 && (errno == EINVAL || errno == EMFILE || errno == ENFILE))
        pid = jobd_clone(spawn_child, stack + sizeof stack, flags, &request);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid == -1) {
        result = saved;
    } else if (request.error != 0) {
        // It failed before or in exec and has exited: reap it.
        int status;
        while (waitpid(pid, &status, 0) == -1 && errno == EINTR) {}
        if (pidfd >= 0) close(pidfd);
        result = request.error;
    } else {
        *pid_out = pid;
        *pidfd_out = pidfd;
    }
out:
    for (int i = 0; i < 3; i++)
        if (moved[i] >= 0) close(moved[i]);
    return result;
}

// MARK: spawner threads
//
// PR_SET_PDEATHSIG fires when the *thread* that spawned the child ends, not
// the process: a child spawned from a dispatch or Swift concurrency worker
// would be killed when that worker retires after a while idle. So children
// are spawned by a few threads of this file's own, which never end before
// the process does: the child then gets SIGKILL exactly when jobd dies
// (SIGKILL, a crash, an exit), however it dies.

/// One spawn handed to a spawner thread; on the caller's stack.
struct spawn_call {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *cwd;
    int in_fd, out_fd, err_fd;
    pid_t pid;
    int pidfd;
    int result;
    int done;
    struct spawn_call *next;
};

enum { SPAWNER_THREADS = 4 };

static pthread_mutex_t spawner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawner_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t spawner_done = PTHREAD_COND_INITIALIZER;
static struct spawn_call *spawner_head;
static struct spawn_call *spawner_tail;
static pthread_once_t spawner_once = PTHREAD_ONCE_INIT;
static int spawner_count;

static void *spawner_main(void *unused) {
    (void)unused;
    // Signals are for jobd's other threads.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    for (;;) {
        pthread_mutex_lock(&spawner_lock);
        while (spawner_head == NULL) pthread_cond_wait(&spawner_work, &spawner_lock);
        struct spawn_call *call = spawner_head;
        spawner_head = call->next;
        if (spawner_head == NULL) spawner_tail = NULL;
        pthread_mutex_unlock(&spawner_lock);

        call->result = spawn_here(call->path, call->argv, call->envp, call->cwd, call->in_fd, call->out_fd,
                                  call->err_fd, 1, &call->pid, &call->pidfd);

        pthread_mutex_lock(&spawner_lock);
        call->done = 1;
        pthread_cond_broadcast(&spawner_done);
        pthread_mutex_unlock(&spawner_lock);
    }
    return NULL;
}

static void start_spawners(void) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return;
    // The child runs on a 16 KiB array in spawn_here's frame.
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    // Created with every signal blocked, so none lands on them before they block it themselves.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < SPAWNER_THREADS; i++) {
        pthread_t thread;
        if (pthread_create(&thread, &attr, spawner_main, NULL) == 0) spawner_count++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

int jobd_spawn(const char *path, char *const argv[], char *const envp[],
               const char *cwd, int in_fd, int out_fd, int err_fd,
               pid_t *pid_out, int *pidfd_out) {
    pthread_once(&spawner_once, start_spawners);
    if (spawner_count == 0) {
        // No thread could be had: spawned here, without the parent-death signal.
        return spawn_here(path, argv, envp, cwd, in_fd, out_fd, err_fd, 0, pid_out, pidfd_out);
    }
    struct spawn_call call = {
        .path = path, .argv = argv, .envp = envp, .cwd = cwd,
        .in_fd = in_fd, .out_fd = out_fd, .err_fd = err_fd,
        .pid = 0, .pidfd = -1, .result = 0, .done = 0, .next = NULL,
    };
    pthread_mutex_lock(&spawner_lock);
    if (spawner_tail != NULL) spawner_tail->next = &call; else spawner_head = &call;
    spawner_tail = &call;
    pthread_cond_signal(&spawner_work);
    while (!call.done) pthread_cond_wait(&spawner_done, &spawner_lock);
    pthread_mutex_unlock(&spawner_lock);
    *pidfd_out = call.pidfd;
    if (call.result == 0) *pid_out = call.pid;
    return call.result;
}

int jobd_peek_exit(pid_t pid, int *exit_code, int *signal_number) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int rc;
    do {
        rc = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
    } while (rc == -1 && errno == EINTR);
    if (rc == -1) return -1;
    if (info.si_pid == 0) return 0;
    if (info.si_code == CLD_EXITED) {
        *exit_code = info.si_status;
        *signal_number = 0;
    } else {
        *exit_code = -1;
        *signal_number = info.si_status;
    }
    return 1;
}

pid_t jobd_reap(pid_t pid) {
    int status;
    pid_t rc;
    do {
        rc = waitpid(pid, &status, WNOHANG);
    } while (rc == -1 && errno == EINTR);
    return rc;
}

void jobd_wait_exit_blocking(pid_t pid) {
    siginfo_t info;
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) == -1 && errno == EINTR) {}
}

ssize_t jobd_write_nosigpipe(int fd, const void *buffer, size_t count) {
    sigset_t pipe_only, old_mask, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);

    ssize_t written;
    do {
        written = write(fd, buffer, count);
    } while (written == -1 && errno == EINTR);
    int saved = errno;

    if (written == -1 && saved == EPIPE && !was_pending) {
        // The kernel queued SIGPIPE for this thread; take it off again.
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &zero) == -1 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    errno = saved;
    return written;
}

int jobd_pipe(int fds[2], int parent_end) {
    if (pipe2(fds, O_CLOEXEC) != 0) {
        fds[0] = fds[1] = -1;
        return -1;
    }
    // A new pipe's end has no status flag set: one F_SETFL, no F_GETFL.
    if (fcntl(fds[parent_end], F_SETFL, O_NONBLOCK) == -1) {
        int saved = errno;
        close(fds[0]);
        close(fds[1]);
        fds[0] = fds[1] = -1;
        errno = saved;
        return -1;
    }
    return 0;
}

int jobd_find_executable(const char *name, const char *search_path, const char *cwd,
                         char *out, size_t out_size) {
    size_t name_length = strlen(name);
    size_t cwd_length = cwd != NULL ? strlen(cwd) : 0;
    char checked[4096];
    const char *entry = search_path;
    for (;;) {
        const char *end = strchrnul(entry, ':');
        size_t folder_length = (size_t)(end - entry);
        const char *folder = entry;
        if (folder_length == 0) {
            folder = ".";
            folder_length = 1;
        }
        int slash = folder[folder_length - 1] != '/';
        size_t length = folder_length + (size_t)slash + name_length;
        if (length + 1 > out_size) return 0;
        memcpy(out, folder, folder_length);
        if (slash) out[folder_length] = '/';
        memcpy(out + folder_length + slash, name, name_length + 1);
        const char *path = out;
        if (out[0] != '/' && cwd != NULL) {
            int cwd_slash = cwd_length == 0 || cwd[cwd_length - 1] != '/';
            if (cwd_length + (size_t)cwd_slash + length + 1 > sizeof checked) return 0;
            memcpy(checked, cwd, cwd_length);
            if (cwd_slash) checked[cwd_length] = '/';
            memcpy(checked + cwd_length + cwd_slash, out, length + 1);
            path = checked;
        }
        struct stat info;
        if (stat(path, &info) == 0) {
            if (!S_ISREG(info.st_mode) || access(path, X_OK) != 0) return 0;
            return 1;
        }
        if (errno == EACCES) return 0;
        if (*end == '\0') return 0;
        entry = end + 1;
    }
}

const char *jobd_signal_abbrev(int signal_number) {
    return sigabbrev_np(signal_number);
}

const unsigned int JOBD_EPOLLIN = EPOLLIN;
const unsigned int JOBD_EPOLLOUT = EPOLLOUT;
const unsigned int JOBD_EPOLLERR = EPOLLERR;
const unsigned int JOBD_EPOLLHUP = EPOLLHUP;

int jobd_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int jobd_epoll_add(int epfd, int fd, unsigned int events, unsigned long long token) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int jobd_epoll_del(int epfd, int fd) {
    struct epoll_event unused;
    memset(&unused, 0, sizeof unused);
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &unused);
}

int jobd_epoll_wait(int epfd, unsigned long long *tokens, unsigned int *events,
                    int capacity, int timeout_ms) {
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int count;
    do {
        count = epoll_wait(epfd, ready, capacity, timeout_ms);
    } while (count == -1 && errno == EINTR);
    for (int i = 0; i < count; i++) {
        tokens[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return count;
}

long long jobd_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

int jobd_timerfd_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int jobd_timerfd_arm(int fd, long long deadline_ns) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (deadline_ns > 0) {
        spec.it_value.tv_sec = deadline_ns / 1000000000LL;
        spec.it_value.tv_nsec = deadline_ns % 1000000000LL;
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

void jobd_timerfd_clear(int fd) {
    uint64_t expirations;
    ssize_t ignored = read(fd, &expirations, sizeof expirations);
    (void)ignored;
}
