#ifndef CPROCESSSUPPORT_H
#define CPROCESSSUPPORT_H
#include <sys/types.h>

/// Spawns `path` with `argv`/`envp` (NULL-terminated): clone(CLONE_VM |
/// CLONE_VFORK) on a stack in this call's frame, then, in the child,
/// in_fd/out_fd/err_fd become 0/1/2, every other descriptor is closed
/// (close_range), the child leads a new process group (pgid = its pid),
/// every signal's disposition is reset to the default (so an ignored
/// SIGPIPE or SIGTERM in the daemon does not leak into the child) and its
/// signal mask is emptied, `cwd` (may be NULL) is entered, and it execs.
/// The clone is made by one of a few threads of the shim's own that live
/// as long as the process, and the child gets SIGKILL when the process
/// dies (PR_SET_PDEATHSIG, which follows the spawning thread): a stage's
/// process does not outlive a jobd that is SIGKILLed or crashes. Only the
/// child itself: processes it starts are its own to end.
/// Returns 0 and stores the pid and a pidfd for the child (close-on-exec;
/// -1 before Linux 5.2, or with no descriptor free), or returns an errno
/// value (ENOENT, EACCES, ENOEXEC, … from exec, or chdir's).
int jobd_spawn(const char *path, char *const argv[], char *const envp[],
               const char *cwd, int in_fd, int out_fd, int err_fd,
               pid_t *pid_out, int *pidfd_out);

/// Looks at `pid` without reaping it (waitid WEXITED|WNOHANG|WNOWAIT).
/// Returns 1 once it has exited: `*exit_code` holds the exit status, or -1
/// when a signal ended it, and then `*signal_number` holds the signal
/// (else 0). Returns 0 while it runs, -1 with errno on error (ECHILD: it
/// was reaped by someone else).
int jobd_peek_exit(pid_t pid, int *exit_code, int *signal_number);

/// Reaps an exited child (waitpid WNOHANG, retried on EINTR). Returns the
/// pid, 0 if it has not exited, -1 with errno.
pid_t jobd_reap(pid_t pid);

/// Blocks until `pid` has exited, without reaping it (last resort when no
/// pidfd and no timerfd could be had).
void jobd_wait_exit_blocking(pid_t pid);

/// write(2) that never raises SIGPIPE in this process: SIGPIPE is blocked
/// in the calling thread for the call, and one raised by it is consumed.
/// Returns what write returned; errno EPIPE when the reader is gone.
ssize_t jobd_write_nosigpipe(int fd, const void *buffer, size_t count);

/// Creates a pipe whose both ends are close-on-exec; `parent_end` (0 = the
/// read end, 1 = the write end) is also non-blocking; the child's end stays
/// blocking as programs expect. Returns 0, or -1 with errno and both
/// fds set to -1.
int jobd_pipe(int fds[2], int parent_end);

/// The common case of finding a program on PATH, with no allocation: for a
/// `name` without a slash, the first `DIR/name` along `search_path`
/// (':'-separated; an empty entry is ".") that is a regular file this
/// process may execute, a relative one checked against `cwd` (NULL: the
/// daemon's own). Writes that candidate, as the child will exec it, into
/// `out` and returns 1. Returns 0 whenever anything else happens — nothing
/// found, an entry refused (EACCES, a folder, not executable), a path too
/// long — so that the caller's full lookup decides and says why.
int jobd_find_executable(const char *name, const char *search_path, const char *cwd,
                         char *out, size_t out_size);

/// The signal's abbreviation without "SIG" ("TERM"), or NULL.
const char *jobd_signal_abbrev(int signal_number);

/// epoll, with the registration's 64-bit token as its data (never a
/// pointer: an event already fetched for a registration just removed must
/// find nothing, not freed memory).
int jobd_epoll_create(void);
int jobd_epoll_add(int epfd, int fd, unsigned int events, unsigned long long token);
int jobd_epoll_del(int epfd, int fd);
/// Waits (retrying EINTR) and copies up to `capacity` events into the two
/// arrays; returns their count or -1 with errno.
int jobd_epoll_wait(int epfd, unsigned long long *tokens, unsigned int *events,
                    int capacity, int timeout_ms);
extern const unsigned int JOBD_EPOLLIN;
extern const unsigned int JOBD_EPOLLOUT;
extern const unsigned int JOBD_EPOLLERR;
extern const unsigned int JOBD_EPOLLHUP;

/// CLOCK_MONOTONIC now, in nanoseconds.
long long jobd_monotonic_ns(void);
/// A non-blocking, close-on-exec CLOCK_MONOTONIC timerfd, or -1.
int jobd_timerfd_create(void);
/// Arms the timer to fire once at `deadline_ns` (CLOCK_MONOTONIC; in the
/// past: at once), or disarms it when `deadline_ns` is 0.
int jobd_timerfd_arm(int fd, long long deadline_ns);
/// Reads and discards the expiration count (non-blocking).
void jobd_timerfd_clear(int fd);

#endif
