import CProcessSupport
import Dispatch
import JobValues

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Exit, timers, the group kill sequence and completion of a
// `RunningProcess`. Every method runs under the state's lock.

extension RunningProcess {
    /// Arms the watches of a freshly spawned child and writes what of its
    /// input fits into the pipe.
    func start(pidfd: Int32?, timeout: Duration?) {
        withState { state in
            state.arm(pidfd: pidfd, timeout: timeout, in: self)
        }
    }
}

extension RunningProcess.State {
    mutating func arm(pidfd: Int32?, timeout: Duration?, in process: RunningProcess) {
        let loop = process.loop
        stdoutToken = loop.register(process.stdoutFD, events: JOBD_EPOLLIN, for: process, as: .stdout)
        stderrToken = loop.register(process.stderrFD, events: JOBD_EPOLLIN, for: process, as: .stderr)
        if stdoutToken == nil || stderrToken == nil {
            // Out of memory for epoll watches: the output cannot be read,
            // so end the run now.
            let error = errno
            closeStdout(in: process)
            closeStderr(in: process)
            stop(.ioFailed(error), grace: .zero, in: process)
        }

        if let pidfd {
            pidFD = pidfd
            pidToken = loop.register(pidfd, events: JOBD_EPOLLIN, for: process, as: .exit)
            if pidToken == nil {
                _ = close(pidfd)
                pidFD = -1
            }
        }
        if pidToken == nil {
            // No pidfd (Linux < 5.2, or out of descriptors): peek at the
            // child with backoff from 1 ms to 100 ms, still without a
            // blocked thread.
            exitPollAt = deadline(after: exitPollDelay)
        }
        if let timeout {
            timeoutAt = deadline(after: timeout)
        }
        rearmTimer(in: process)
        writeInput(in: process)
    }

    // MARK: exit

    /// The pidfd became readable (or the poll is due): read the status
    /// without reaping, so the pid — and with it the process group id —
    /// stays ours until `finishIfDone` has sent the group its last signal.
    mutating func checkExit(in process: RunningProcess) {
        guard termination == nil, let pid = process.processID else { return }
        var code: Int32 = 0
        var signal: Int32 = 0
        switch jobd_peek_exit(pid, &code, &signal) {
        case 1:
            termination = signal != 0 ? .signaled(signal) : .exited(code)
        case 0:
            if pidToken == nil {
                exitPollDelay = min(exitPollDelay * 2, .milliseconds(100))
                exitPollAt = deadline(after: exitPollDelay)
                rearmTimer(in: process)
            }
            return
        default:
            termination = .unknown  // ECHILD: reaped behind our back
        }
        exitPollAt = nil
        if let token = pidToken {
            process.loop.unregister(pidFD, token: token)
            pidToken = nil
        }
        if pidFD >= 0 {
            _ = close(pidFD)
            pidFD = -1
        }
    }

    /// Whether signalling `-pid` reaches our group: true until the leader is
    /// reaped (by us in `finishIfDone`, or by someone else: `.unknown`).
    var groupIsOurs: Bool {
        !finished && termination != .unknown
    }

    // MARK: timers

    /// Arms the timerfd (created on first need) for the earliest deadline,
    /// or disarms it.
    mutating func rearmTimer(in process: RunningProcess) {
        let next = [timeoutAt, killAt, abandonAt, exitPollAt].compactMap { $0 }.min()
        if timerFD < 0 {
            guard next != nil else { return }
            timerFD = jobd_timerfd_create()
            if timerFD >= 0 {
                timerToken = process.loop.register(timerFD, events: JOBD_EPOLLIN, for: process, as: .timer)
            }
            if timerToken == nil {
                // No timer: fall back to SIGKILL at once on any stop, and a
                // reaper thread for the exit (resource exhaustion only).
                if timerFD >= 0 { _ = close(timerFD) }
                timerFD = -1
                degradeWithoutTimer(in: process)
                return
            }
        }
        _ = jobd_timerfd_arm(timerFD, next ?? 0)
    }

    mutating func timerFired(in process: RunningProcess) {
        guard timerFD >= 0 else { return }
        jobd_timerfd_clear(timerFD)
        let now = jobd_monotonic_ns()
        if let due = exitPollAt, due <= now {
            exitPollAt = nil
            checkExit(in: process)
        }
        if let due = timeoutAt, due <= now, let limit = process.timeout {
            timeoutAt = nil
            stop(.timedOut(limit), grace: process.killGrace, in: process)
        }
        if let due = killAt, due <= now {
            killAt = nil
            sendKill(in: process)
        }
        if let due = abandonAt, due <= now {
            abandonAt = nil
            closeStdout(in: process)
            closeStderr(in: process)
        }
        rearmTimer(in: process)
    }

    /// Without any timer, deadlines cannot be kept: a stop kills at once,
    /// and a poll for the exit becomes one thread blocked in waitpid — only
    /// when the system is out of descriptors or memory.
    private mutating func degradeWithoutTimer(in process: RunningProcess) {
        if killAt != nil {
            killAt = nil
            sendKill(in: process)
        }
        abandonAt = nil
        timeoutAt = nil
        if exitPollAt != nil, let pid = process.processID {
            exitPollAt = nil
            DispatchQueue.global().async {
                jobd_wait_exit_blocking(pid)
                process.handle(.exit, events: 0)
            }
        }
    }

    // MARK: ending the group

    /// SIGTERM to the group now (once), SIGKILL after `grace` (at once,
    /// without SIGTERM, for a zero grace). The first reason is the one
    /// reported.
    mutating func stop(_ reason: RunningProcess.StopReason, grace: Duration, in process: RunningProcess) {
        guard !finished, let pid = process.processID else { return }
        if stopReason == nil { stopReason = reason }
        timeoutAt = nil
        guard !killSent, groupIsOurs else { return }
        guard grace > .zero else {
            sendKill(in: process)
            return
        }
        let deadline = deadline(after: grace)
        if let current = killAt, current <= deadline { return }
        killAt = deadline
        graceUsed = grace
        if !termSent {
            termSent = true
            _ = kill(-pid, SIGTERM)
        }
        rearmTimer(in: process)
    }

    /// SIGKILL to the group; then, should a pipe still be held open by a
    /// process that left the group, stop waiting for it after a while.
    mutating func sendKill(in process: RunningProcess) {
        guard !finished, !killSent, let pid = process.processID else { return }
        killSent = true
        killAt = nil
        if groupIsOurs { _ = kill(-pid, SIGKILL) }
        abandonAt = deadline(after: RunningProcess.abandonPipesAfter)
        rearmTimer(in: process)
    }

    // MARK: completion

    /// Once the exit status is known and both output pipes are closed:
    /// SIGKILL whatever is left of the group (the leader, unreaped, still
    /// holds the group id, so this cannot hit a stranger), reap the leader,
    /// release everything, and hand back the completion call.
    mutating func finishIfDone(in process: RunningProcess) -> (@Sendable () -> Void)? {
        guard !finished, let termination, !stdoutOpen, !stderrOpen, let pid = process.processID else {
            return nil
        }
        if termination != .unknown {
            _ = kill(-pid, SIGKILL)
            _ = jobd_reap(pid)
        }
        finished = true
        closeStdin(in: process)
        if let token = timerToken {
            process.loop.unregister(timerFD, token: token)
            timerToken = nil
        }
        if timerFD >= 0 {
            _ = close(timerFD)
            timerFD = -1
        }
        let result = makeResult(termination: termination, process: process)
        output = CappedOutput(limit: 0)
        guard let completion else { return nil }
        self.completion = nil
        return { completion(result) }
    }
}

/// CLOCK_MONOTONIC nanoseconds `delay` from now (saturating).
func deadline(after delay: Duration) -> Int64 {
    let (sum, overflow) = jobd_monotonic_ns().addingReportingOverflow(delay.nanoseconds)
    return overflow ? .max : sum
}
