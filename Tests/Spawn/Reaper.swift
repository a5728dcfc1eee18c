import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reaps one child as soon as it ends, on a thread of its own: no zombie
/// stays behind, even for a moment a test would notice. (Zombies also
/// make swift-testing's exit-test monitor, which waits for any child
/// without reaping, spin until they are gone.)
///
/// Reaping happens under the lock that signals go out under, so that no
/// signal reaches a pid after it was given back to the system.
final class Reaper: Sendable {
    let pid: pid_t
    private let termination = Mutex<SpawnedProcess.Termination?>(nil)
    private let ended = DispatchSemaphore(value: 0)

    init(_ pid: pid_t) {
        self.pid = pid
        Thread.detachNewThread { [self] in
            // Waits without reaping (WNOWAIT), so that the pid stays this child's until the lock is held.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
            termination.withLock { termination in
                var status: Int32 = 0
                var reaped: pid_t
                repeat { reaped = waitpid(pid, &status, 0) } while reaped < 0 && errno == EINTR
                // -1 (ECHILD): reaped by something else, which nothing in the tests does; its status is lost.
                termination = reaped == pid ? SpawnedProcess.Termination(waitStatus: status) : .exited(-1)
            }
            ended.signal()
        }
    }

    /// The child's end, once reaped; nil while it runs.
    var current: SpawnedProcess.Termination? { termination.withLock { $0 } }

    /// Sends `signal` to the child, or to the group it leads, unless it was reaped.
    func send(_ signal: Int32, toGroup: Bool) {
        termination.withLock { termination in
            if termination == nil { _ = kill(toGroup ? -pid : pid, signal) }
        }
    }

    /// Blocks until the child was reaped, or until `deadline` (then nil).
    func wait(until deadline: DispatchTime = .distantFuture) -> SpawnedProcess.Termination? {
        guard ended.wait(timeout: deadline) == .success else { return nil }
        ended.signal()  // For the next waiter.
        return current
    }
}
