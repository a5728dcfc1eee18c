/// Why a child process did not produce a value. `code` is stable and meant
/// for matching; `description` is for people.
public struct ProcessError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The program is not on `PATH`, or its path does not exist.
        public static let executableNotFound = Code("executable-not-found")
        /// The program exists but cannot be executed (no permission, a
        /// folder, not a valid executable).
        public static let notExecutable = Code("not-executable")
        /// `cwd` does not exist or is not a folder.
        public static let workingDirectoryMissing = Code("cwd-missing")
        /// argv is empty, or holds a NUL byte.
        public static let invalidCommand = Code("invalid-command")
        /// Spawning, a pipe or pidfd failed for another reason (see `errno`).
        public static let spawnFailed = Code("spawn-failed")
        /// It exited with a status other than 0.
        public static let nonZeroExit = Code("non-zero-exit")
        /// A signal ended it (not one the runner sent).
        public static let signaled = Code("signaled")
        /// Stdout went past the limit; the process group was ended.
        public static let outputLimitExceeded = Code("output-limit-exceeded")
        /// Its timeout passed; the process group was ended.
        public static let timedOut = Code("timed-out")
        /// `cancel()` / `terminate(grace:)` ended it.
        public static let cancelled = Code("cancelled")
        /// Reading its output failed (see `errno`).
        public static let ioFailed = Code("io-failed")
    }

    public var code: Code
    /// What failed, where, and what to do.
    public var message: String
    /// The command, as in messages: the program or `sh -c '…'`.
    public var command: String
    /// How the main process ended, when it ran.
    public var termination: ProcessTermination?
    /// The last bytes it wrote to stderr (at most the spec's tail limit).
    public var stderrTail: [UInt8]
    /// The errno behind a spawn or I/O failure.
    public var errno: Int32?
    /// Whether the runner had to send SIGKILL to the group (after a
    /// timeout, cancel or output overflow outlived the grace period).
    public var killed: Bool

    public init(
        code: Code, message: String, command: String, termination: ProcessTermination? = nil,
        stderrTail: [UInt8] = [], errno: Int32? = nil, killed: Bool = false
    ) {
        self.code = code
        self.message = message
        self.command = command
        self.termination = termination
        self.stderrTail = stderrTail
        self.errno = errno
        self.killed = killed
    }

    /// The message, then the stderr tail on its own lines.
    public var description: String {
        guard !stderrTail.isEmpty else { return message }
        var tail = String(decoding: stderrTail, as: UTF8.self)
        while tail.last?.isNewline == true { tail.removeLast() }
        return "\(message)\nstderr (last \(stderrTail.count) bytes):\n\(tail)"
    }

    /// Whether the run ended because of `timeout` or a cancel rather than
    /// the program itself.
    public var isTimeoutOrCancel: Bool { code == .timedOut || code == .cancelled }
}

extension ProcessError {
    /// The process never ran: its program or folder was not there, or the
    /// spawn itself failed.
    public var isFailureToStart: Bool {
        [.executableNotFound, .notExecutable, .workingDirectoryMissing, .invalidCommand, .spawnFailed].contains(code)
    }
}
