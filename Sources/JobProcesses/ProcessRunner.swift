import CProcessSupport
import Dispatch
import Locking
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts child processes for `run` and `shell` actions and reports each
/// one's outcome once, through a callback (the engine resolves a promise
/// with it) or `async`.
///
/// Each child: spawned by `jobd_spawn` (clone, then exec), in a new process
/// group, with only fds 0, 1, 2 (a stdin pipe fed with the input, stdout
/// and stderr pipes), default signal dispositions, an empty signal mask,
/// and an environment without `NOTIFY_SOCKET`, `WATCHDOG_*` and
/// `LISTEN_*`. See `RunningProcess` for how it is watched.
///
/// Needs: nothing else in the process reaps children it did not start
/// (`waitpid(-1)`, or SIGCHLD set to SIG_IGN).
public struct ProcessRunner: Sendable {
    /// Where completions are called (on the event loop's thread only with
    /// `completesOnLoopThread`).
    public let completionQueue: DispatchQueue
    /// This runner's one thread that watches every child it started; copies
    /// of the runner share it.
    let loop = ProcessEventLoop()

    /// Tests turn this off to exercise the fallback for kernels without
    /// pidfds (`CLONE_PIDFD`, Linux < 5.2): polling `waitid` on a timerfd.
    var usesPidfd = true

    /// Whether a run that ends while the event loop handles its event is
    /// completed right there, on the loop's thread, rather than on
    /// `completionQueue`: one thread hop less a process. Only
    /// for completions that take microseconds and never block — resolving
    /// a promise whose handlers do no more — as every other process waits
    /// meanwhile. Runs that end elsewhere (failing to start, a cancel from
    /// another thread) are still completed on `completionQueue`.
    public let completesOnLoopThread: Bool

    public init(completionQueue: DispatchQueue = .global(), completesOnLoopThread: Bool = false) {
        self.completionQueue = completionQueue
        self.completesOnLoopThread = completesOnLoopThread
    }

    /// Starts `spec` and returns at once; `completion` is called exactly
    /// once, on `completionQueue` (keep it short: resolve a promise). When
    /// the process cannot start, it gets the error, asynchronously, too.
    @discardableResult
    public func run(
        _ spec: ProcessSpec,
        completion: @escaping @Sendable (Result<ProcessOutcome, ProcessError>) -> Void
    ) -> RunningProcess {
        do {
            return try launch(spec, completion: completion)
        } catch {
            return RunningProcess(
                failed: error, spec: spec, completionQueue: completionQueue, loop: loop, completion: completion)
        }
    }

    /// Runs `spec` to completion. Cancelling the task cancels the process
    /// (SIGTERM to its group, SIGKILL after the grace) and throws
    /// `.cancelled` once it is gone.
    public func run(_ spec: ProcessSpec) async throws(ProcessError) -> ProcessOutcome {
        let handle = CancelHandle()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<ProcessOutcome, ProcessError>, Never>) in
                let process = run(spec) { continuation.resume(returning: $0) }
                handle.set(process)
            }
        } onCancel: {
            handle.cancel()
        }
        return try result.get()
    }

    private func launch(
        _ spec: ProcessSpec, completion: @escaping RunningProcess.Completion
    ) throws(ProcessError) -> RunningProcess {
        let command = spec.command.displayName
        let arguments = spec.command.arguments
        let strings = try ExecStrings.pack(arguments: arguments, environment: spec.environment, command: command)
        if let directory = spec.workingDirectory {
            try Self.checkDirectory(directory, command: command)
        }
        let searchPath = spec.environment["PATH"]
        let lookup = try ExecutableLookup.resolveRemembering(
            arguments[0], searchPath: searchPath, directory: spec.workingDirectory, command: command)
        var path = lookup.path

        var stdin: [Int32] = [-1, -1]
        var stdout: [Int32] = [-1, -1]
        var stderr: [Int32] = [-1, -1]
        func closeAll() {
            for fd in stdin + stdout + stderr where fd >= 0 { _ = close(fd) }
        }
        guard jobd_pipe(&stdin, 1) == 0, jobd_pipe(&stdout, 0) == 0, jobd_pipe(&stderr, 0) == 0 else {
            let error = errno
            closeAll()
            throw ProcessError(
                code: .spawnFailed, message: "cannot run `\(command)`: no pipe: \(String(cString: strerror(error)))",
                command: command, errno: error)
        }

        func spawn() -> Result<(pid: pid_t, pidfd: Int32?), ChildSpawn.SpawnErrno> {
            ChildSpawn.spawn(
                path: path, strings: strings, directory: spec.workingDirectory,
                stdin: stdin[0], stdout: stdout[1], stderr: stderr[1])
        }
        var spawned = spawn()
        if case .failure = spawned, lookup.remembered {
            // The program found a moment ago may be gone: look again, as
            // without the memory (the lookup's error, or the other path).
            ExecutableLookup.forget(arguments[0], searchPath: searchPath, directory: spec.workingDirectory)
            do {
                let fresh = try ExecutableLookup.resolve(
                    arguments[0], searchPath: searchPath, directory: spec.workingDirectory, command: command)
                if fresh != path {
                    path = fresh
                    spawned = spawn()
                }
            } catch {
                closeAll()
                throw error
            }
        }
        _ = close(stdin[0])
        _ = close(stdout[1])
        _ = close(stderr[1])
        let (pid, pidfd): (pid_t, Int32?)
        switch spawned {
        case let .success(child):
            pid = child.pid
            if usesPidfd {
                pidfd = child.pidfd
            } else {
                if let fd = child.pidfd { _ = close(fd) }
                pidfd = nil
            }
        case let .failure(error):
            for fd in [stdin[1], stdout[0], stderr[0]] { _ = close(fd) }
            throw Self.spawnError(error.value, path: path, command: command)
        }

        let process = RunningProcess(
            pid: pid, spec: spec, completionQueue: completionQueue, completesOnLoopThread: completesOnLoopThread,
            loop: loop,
            stdin: stdin[1], stdout: stdout[0], stderr: stderr[0], completion: completion)
        process.start(pidfd: pidfd, timeout: spec.timeout)
        return process
    }

    static func checkDirectory(_ directory: String, command: String) throws(ProcessError) {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            let error = errno
            throw ProcessError(
                code: .workingDirectoryMissing,
                message:
                    "cannot run `\(command)`: its cwd \(directory) does not exist or is not a folder; create it or fix the stage's `cwd`",
                command: command, errno: error)
        }
        guard access(directory, X_OK) == 0 else {
            throw ProcessError(
                code: .workingDirectoryMissing,
                message: "cannot run `\(command)`: its cwd \(directory) may not be entered (no search permission)",
                command: command, errno: EACCES)
        }
    }

    static func spawnError(_ error: Int32, path: String, command: String) -> ProcessError {
        let reason = String(cString: strerror(error))
        switch error {
        case ENOENT:
            return ProcessError(
                code: .executableNotFound,
                message: "cannot run `\(command)`: \(path) or its interpreter (#! line) does not exist (\(reason))",
                command: command, errno: error)
        case EACCES, ENOEXEC, EISDIR, ETXTBSY, EPERM:
            return ProcessError(
                code: .notExecutable, message: "cannot run `\(command)`: \(path) cannot be executed (\(reason))",
                command: command, errno: error)
        default:
            return ProcessError(
                code: .spawnFailed, message: "cannot run `\(command)`: spawning it failed (\(reason))",
                command: command, errno: error)
        }
    }
}

/// The process an async run started, for the task's cancellation handler
/// (which may run before, during or after `run` stored it).
private final class CancelHandle: Sendable {
    private let state = Mutex<(process: RunningProcess?, cancelled: Bool)>((nil, false))

    func set(_ process: RunningProcess) {
        let cancelled = state.withAnnouncedLock { state in
            state.process = process
            return state.cancelled
        }
        if cancelled { process.cancel() }
    }

    func cancel() {
        let process = state.withAnnouncedLock { state in
            state.cancelled = true
            return state.process
        }
        process?.cancel()
    }
}
