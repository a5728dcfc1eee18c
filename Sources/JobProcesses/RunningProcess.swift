import CProcessSupport
import Dispatch
import Locking
import Synchronization

/// A child process started by `ProcessRunner`. Its completion fires exactly
/// once, after the main process's exit status is known and stdout and
/// stderr reached end-of-file (or stdout went past its limit); by then the
/// process is reaped and nothing of its process group is left.
///
/// Nothing blocks a thread on it: its pipes (non-blocking), its pidfd and
/// its timerfd are watched by `ProcessEventLoop`'s single epoll thread,
/// which runs the handlers below under `state`'s lock.
public final class RunningProcess: Sendable {
    public typealias Completion = @Sendable (Result<ProcessOutcome, ProcessError>) -> Void

    /// The main process's pid, which is also its process group's id; nil
    /// when it could not be started.
    public let processID: pid_t?
    /// The command as messages name it.
    public let command: String

    let completionQueue: DispatchQueue
    /// `ProcessRunner.completesOnLoopThread`.
    let completesOnLoopThread: Bool
    /// The runner's event loop, which watches this process's descriptors
    /// (held, so that the loop outlives every process it watches).
    let loop: ProcessEventLoop
    let killGrace: Duration
    let timeout: Duration?
    let outputLimit: Int
    let stderrLines: (any OutputLineSink)?
    let stdoutLines: (any OutputLineSink)?
    let started: ContinuousClock.Instant
    /// Parent ends of the pipes (-1 for a run that never started). Each is
    /// unregistered from the loop, then closed, exactly once.
    let stdinFD: Int32
    let stdoutFD: Int32
    let stderrFD: Int32
    let state: Mutex<State>

    /// How long output pipes may stay open after SIGKILL went to the group
    /// (something that left the group holds them) before they are closed.
    static let abandonPipesAfter: Duration = .seconds(2)

    enum StopReason {
        case timedOut(Duration)
        case cancelled
        case outputLimit
        case ioFailed(Int32)
    }

    struct State {
        var output: CappedOutput
        var errorTail: TailBuffer
        var errorLines = LineSplitter()
        var outputLines = LineSplitter()
        var input: [UInt8]
        var inputOffset = 0
        var wroteAllInput = false

        var stdinOpen = true
        var stdoutOpen = true
        var stderrOpen = true
        var stdinToken: UInt64?
        var stdoutToken: UInt64?
        var stderrToken: UInt64?
        /// The pidfd and its registration; -1 once exited (or without one).
        var pidFD: Int32 = -1
        var pidToken: UInt64?
        var timerFD: Int32 = -1
        var timerToken: UInt64?

        /// Deadlines, CLOCK_MONOTONIC nanoseconds; the timerfd is armed for
        /// the earliest.
        var timeoutAt: Int64?
        var killAt: Int64?
        var abandonAt: Int64?
        var exitPollAt: Int64?
        var exitPollDelay: Duration = .milliseconds(1)

        var termination: ProcessTermination?
        var stopReason: StopReason?
        var termSent = false
        var killSent = false
        var graceUsed: Duration = .zero
        var finished = false
        var completion: Completion?
    }

    /// A spawned child; `start(pidfd:timeout:)` arms its watches.
    init(
        pid: pid_t, spec: ProcessSpec, completionQueue: DispatchQueue, completesOnLoopThread: Bool,
        loop: ProcessEventLoop, stdin: Int32, stdout: Int32, stderr: Int32, completion: @escaping Completion
    ) {
        processID = pid
        command = spec.command.displayName
        self.completionQueue = completionQueue
        self.completesOnLoopThread = completesOnLoopThread
        self.loop = loop
        killGrace = spec.killGrace
        timeout = spec.timeout
        outputLimit = spec.outputLimit
        stderrLines = spec.stderrLines
        stdoutLines = spec.stdoutLines
        started = .now
        stdinFD = stdin
        stdoutFD = stdout
        stderrFD = stderr
        state = Mutex(
            State(
                output: CappedOutput(limit: spec.outputLimit),
                errorTail: TailBuffer(limit: spec.stderrTailLimit),
                input: spec.input,
                completion: completion))
    }

    /// A run that failed before its process existed: the completion gets
    /// `error` asynchronously, on `completionQueue`.
    init(
        failed error: ProcessError, spec: ProcessSpec, completionQueue: DispatchQueue, loop: ProcessEventLoop,
        completion: @escaping Completion
    ) {
        processID = nil
        command = spec.command.displayName
        self.completionQueue = completionQueue
        completesOnLoopThread = false
        self.loop = loop
        killGrace = spec.killGrace
        timeout = spec.timeout
        outputLimit = spec.outputLimit
        stderrLines = nil
        stdoutLines = nil
        started = .now
        stdinFD = -1
        stdoutFD = -1
        stderrFD = -1
        var finished = State(output: CappedOutput(limit: 0), errorTail: TailBuffer(limit: 0), input: [])
        finished.finished = true
        state = Mutex(finished)
        completionQueue.async { completion(.failure(error)) }
    }

    /// Ends the run as cancelled: SIGTERM to the process group, SIGKILL
    /// after the spec's `killGrace`. Safe from any thread, any number of
    /// times; does nothing once the run completed.
    public func cancel() {
        terminate(grace: killGrace)
    }

    /// Ends the run as cancelled with this grace between SIGTERM and SIGKILL
    /// (`.zero`: SIGKILL at once, no SIGTERM). A later call may shorten the
    /// grace, never lengthen it.
    public func terminate(grace: Duration) {
        guard processID != nil else { return }
        withState { $0.stop(.cancelled, grace: grace, in: self) }
    }

    /// An event from the loop.
    func handle(_ role: ProcessEventLoop.Role, events: UInt32) {
        withState(completingHere: completesOnLoopThread) { state in
            switch role {
            case .stdin: state.writeInput(in: self)
            case .stdout: state.readStdout(in: self)
            case .stderr: state.readStderr(in: self)
            case .exit: state.checkExit(in: self)
            case .timer: state.timerFired(in: self)
            }
        }
    }

    /// Runs `body` under the lock; if the run just finished, its completion
    /// is called — never under the lock — on this thread when
    /// `completingHere` (the loop's, with `completesOnLoopThread`), else on
    /// `completionQueue`.
    func withState(completingHere: Bool = false, _ body: (inout State) -> Void) {
        let finish = state.withAnnouncedLock { state in
            body(&state)
            return state.finishIfDone(in: self)
        }
        guard let finish else { return }
        if completingHere {
            finish()
        } else {
            completionQueue.async(execute: finish)
        }
    }
}
