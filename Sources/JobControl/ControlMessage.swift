import Foundation

/// jobd's version, as `jobd --version` and `jobctl` print it.
public enum JobdVersion {
    public static let string = "0.1.0"
}

/// What jobctl asks jobd over the unix socket: one JSON object on one line,
/// answered by one ``ControlReply`` on one line, then the connection closes.
///
///     → {"command":"nudge"}
///     ← {"ok":true}
///     → {"command":"cancel","job":42}
///     ← {"ok":true}
///     → {"command":"status"}
///     ← {"ok":true,"status":{"version":"0.1.0","pid":812,"running":2,"pending":40,…}}
///     → {"command":"logs","job":42,"after":{"job_attempt":1,"position":0,"attempt":1,"seq":17},"wait_ms":1000}
///     ← {"ok":true,"logs":{"running":true,"memory_from":{…},"lines":[{"cursor":{…},"at":…,"line":"base64"}]}}
///
/// The socket is the only way in: who may connect is decided by its file
/// mode (owner and group read/write, the group of the database).
public struct ControlRequest: Codable, Sendable, Hashable {
    public enum Command: String, Codable, Sendable, Hashable {
        /// A job was submitted: claim now instead of at the next poll.
        case nudge
        /// `job`'s cancellation was requested in the store: if it runs
        /// here, stop it now instead of at the next lease renewal.
        case cancel
        /// Is jobd running, and what is it doing?
        case status
        /// The Prometheus exposition of jobd's metrics (`jobctl metrics`).
        case metrics
        /// The lines of `job`'s stage logs that jobd holds after `after`
        /// (`jobctl logs --follow`), waiting up to `wait_ms` for new ones
        /// while the job runs there.
        case logs
    }

    public var command: Command
    /// The job a `cancel` or `logs` is about: its id, a positive integer.
    public var job: Int64?
    /// For `logs`: only lines after this one (nil: from the first).
    public var after: LogCursor?
    /// For `logs`: how long jobd may wait for a line before answering
    /// (at most ``ControlRequest/maximumLogWait``).
    public var waitMilliseconds: Int?

    /// The longest a `logs` request waits for a line.
    public static let maximumLogWait: Duration = .seconds(2)

    public init(_ command: Command, job: Int64? = nil, after: LogCursor? = nil, waitMilliseconds: Int? = nil) {
        self.command = command
        self.job = job
        self.after = after
        self.waitMilliseconds = waitMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case command, job, after
        case waitMilliseconds = "wait_ms"
    }
}

/// A place in a job's stage logs: a line of a stage attempt of a job attempt.
public struct LogCursor: Codable, Sendable, Hashable {
    public var jobAttempt: Int
    public var position: Int
    public var attempt: Int
    public var sequence: Int

    public init(jobAttempt: Int, position: Int, attempt: Int, sequence: Int) {
        self.jobAttempt = jobAttempt
        self.position = position
        self.attempt = attempt
        self.sequence = sequence
    }

    enum CodingKeys: String, CodingKey {
        case jobAttempt = "job_attempt"
        case position, attempt
        case sequence = "seq"
    }
}

/// One line a stage wrote, as jobd holds it before it is in the database.
public struct LogLine: Codable, Sendable, Hashable {
    public var cursor: LogCursor
    /// When it was read: seconds since 1970.
    public var at: Double
    /// Its bytes (base64 in JSON: a line need not be UTF-8).
    public var line: Data
    /// `stdout` for a line of stdout; nil for stderr.
    public var stream: String?

    public init(cursor: LogCursor, at: Double, line: Data, stream: String? = nil) {
        self.cursor = cursor
        self.at = at
        self.line = line
        self.stream = stream
    }
}

/// jobd's answer to `logs`.
public struct LiveLogs: Codable, Sendable, Hashable {
    /// This jobd runs the job now. When false, read the database.
    public var running: Bool
    /// Every line after this one that is not in the database is in
    /// `lines`: a follower before it reads the database up to it first.
    /// nil: jobd holds no line of the job; the database has them all.
    public var memoryFrom: LogCursor?
    /// The lines after the asked cursor, in order; when there are many,
    /// only the first of them (ask again after the last).
    public var lines: [LogLine]

    public init(running: Bool, memoryFrom: LogCursor? = nil, lines: [LogLine] = []) {
        self.running = running
        self.memoryFrom = memoryFrom
        self.lines = lines
    }

    enum CodingKeys: String, CodingKey {
        case running
        case memoryFrom = "memory_from"
        case lines
    }
}

extension ControlRequest.Command {
    /// The longest reply to this command either end handles: a metrics
    /// exposition grows with the definitions (about 2 KB for each that has
    /// run a job), every other reply is small.
    public var replyLimit: Int {
        self == .metrics ? ControlCoding.maximumMetricsReply : ControlCoding.maximumReply
    }

    /// How long jobctl waits for the whole exchange, and jobd for the
    /// client to read the reply: rendering a large exposition takes
    /// seconds, every other answer comes at once.
    public var deadline: Duration {
        switch self {
        case .metrics: .seconds(30)
        case .logs: ControlRequest.maximumLogWait + .seconds(2)
        default: .seconds(2)
        }
    }
}

/// jobd's answer to a ``ControlRequest``.
public struct ControlReply: Codable, Sendable, Hashable {
    public var ok: Bool
    /// For `status`.
    public var status: DaemonStatus?
    /// Why the request failed, when `ok` is false.
    public var error: String?
    /// For `metrics`: the Prometheus text exposition.
    public var metrics: String?
    /// For `logs`.
    public var logs: LiveLogs?

    public init(
        ok: Bool, status: DaemonStatus? = nil, error: String? = nil, metrics: String? = nil, logs: LiveLogs? = nil
    ) {
        self.ok = ok
        self.status = status
        self.error = error
        self.metrics = metrics
        self.logs = logs
    }
}

/// What a running jobd reports about itself.
public struct DaemonStatus: Codable, Sendable, Hashable {
    public var version: String
    public var pid: Int32
    /// Jobs this jobd runs now.
    public var running: Int
    /// Jobs waiting in the database (delayed ones included).
    public var pending: Int
    /// Jobs running now, by pool.
    public var pools: [String: Int]
    /// Stopping: it claims no more jobs.
    public var draining: Bool
    /// When this jobd started (ISO 8601, UTC).
    public var startedAt: String
    /// The config file it runs from.
    public var config: String
    /// The zone it reads schedules without `timezone:` in (its host's);
    /// nil from a jobd that does not say.
    public var timezone: String?
    /// Its host's wall clock minus the database's, in seconds (positive:
    /// ahead), at its last reading; nil before one, or from a jobd that
    /// does not say.
    public var clockSkew: Double?

    public init(
        version: String, pid: Int32, running: Int, pending: Int, pools: [String: Int], draining: Bool,
        startedAt: String, config: String, timezone: String? = nil, clockSkew: Double? = nil
    ) {
        self.version = version
        self.pid = pid
        self.running = running
        self.pending = pending
        self.pools = pools
        self.draining = draining
        self.startedAt = startedAt
        self.config = config
        self.timezone = timezone
        self.clockSkew = clockSkew
    }

    enum CodingKeys: String, CodingKey {
        case version, pid, running, pending, pools, draining
        case startedAt = "started_at"
        case config, timezone
        case clockSkew = "clock_skew_seconds"
    }
}

/// The framing both ends use: one JSON document per line.
public enum ControlCoding {
    /// The longest request jobd reads.
    public static let maximumLine = 64 * 1024
    /// The longest reply to any command but `metrics`.
    public static let maximumReply = 16 << 20
    /// The longest reply to `metrics`.
    public static let maximumMetricsReply = 256 << 20

    /// `16 MiB`: a limit as the errors and docs name it.
    public static func text(bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    public static func encodeLine(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(value)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    public static func decodeLine<T: Decodable>(_ type: T.Type, from line: Data) throws -> T {
        try JSONDecoder().decode(type, from: line)
    }
}
