/// What to run: a command, the bytes for its stdin, its environment and
/// directory, and the limits that end it.
public struct ProcessSpec: Sendable {
    /// The program: an argv (never through a shell) or an explicit
    /// `/bin/sh -c SCRIPT`.
    public enum Command: Sendable, Hashable {
        /// `argv[0]` is run with `argv[1...]`; a name without a slash is
        /// looked up on the child's `PATH`.
        case argv([String])
        /// `/bin/sh -c SCRIPT`. The input still arrives on stdin, never
        /// inside the script.
        case shell(String)

        /// The argv actually executed (before the `PATH` lookup).
        public var arguments: [String] {
            switch self {
            case let .argv(argv): return argv
            case let .shell(script): return ["/bin/sh", "-c", script]
            }
        }

        /// A short name for messages: the program, or `sh -c '…'` with the
        /// script's first line — and `…` when anything was left out (more
        /// lines, or the rest of a line over 60 characters).
        public var displayName: String {
            switch self {
            case let .argv(argv): return argv.first ?? "(empty argv)"
            case let .shell(script):
                let lines = script.split(whereSeparator: \.isNewline)
                let first = lines.first.map(String.init) ?? ""
                let short =
                    first.count > 60
                    ? String(first.prefix(57)) + "…"
                    : lines.count > 1 ? first + " …" : first
                return "sh -c '\(short)'"
            }
        }
    }

    /// Stdout past this many bytes rejects the run: 1 MiB unless set.
    public static let defaultOutputLimit = 1 << 20
    /// How much of stderr's end travels with an error: 4 KiB unless set.
    public static let defaultStderrTailLimit = 4 << 10
    /// SIGTERM to SIGKILL on a timeout or cancel: 5 s unless set
    /// (`kill-grace` in jobd.yaml).
    public static let defaultKillGrace: Duration = .seconds(5)

    public var command: Command
    /// Written to the child's stdin, then stdin is closed. May hold any
    /// bytes, NUL included. A child that exits without reading it all is
    /// not an error.
    public var input: [UInt8]
    /// The child's whole environment. Build it with
    /// `ProcessEnvironment.forStage(…)`; whatever it holds, the runner
    /// removes `NOTIFY_SOCKET`, `WATCHDOG_*` and `LISTEN_*`.
    public var environment: [String: String]
    /// The child's working directory (absolute); nil: the daemon's.
    public var workingDirectory: String?
    /// Ends the run (SIGTERM, then SIGKILL after `killGrace`) and rejects
    /// it as timed out; nil: no limit.
    public var timeout: Duration?
    public var killGrace: Duration
    public var outputLimit: Int
    public var stderrTailLimit: Int
    /// Gets every line of stderr as it is read (besides the tail kept for
    /// errors); nil: stderr is not split into lines.
    public var stderrLines: (any OutputLineSink)?
    /// Gets every line of stdout as it is read too (stdout is still the
    /// run's output, within `outputLimit`); nil: stdout is not split.
    public var stdoutLines: (any OutputLineSink)?

    public init(
        _ command: Command,
        input: [UInt8] = [],
        environment: [String: String] = ProcessEnvironment.inherited(),
        workingDirectory: String? = nil,
        timeout: Duration? = nil,
        killGrace: Duration = ProcessSpec.defaultKillGrace,
        outputLimit: Int = ProcessSpec.defaultOutputLimit,
        stderrTailLimit: Int = ProcessSpec.defaultStderrTailLimit,
        stderrLines: (any OutputLineSink)? = nil,
        stdoutLines: (any OutputLineSink)? = nil
    ) {
        self.command = command
        self.input = input
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.timeout = timeout
        self.killGrace = killGrace
        self.outputLimit = outputLimit
        self.stderrTailLimit = stderrTailLimit
        self.stderrLines = stderrLines
        self.stdoutLines = stdoutLines
    }
}
