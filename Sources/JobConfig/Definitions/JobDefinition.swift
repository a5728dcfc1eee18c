import JobValues

/// One job definition (`jobs.d/NAME.yaml`), checked and with every default
/// applied: the engine turns it into a promise chain without looking at YAML.
public struct JobDefinition: Sendable, Hashable {
    /// Unique across the definitions folder; the file's base name unless
    /// `name:` says otherwise.
    public var name: String
    /// A line for `jobctl definitions`, if given.
    public var description: String?
    /// The pool whose slots this job's runs take (`default` unless given).
    public var pool: String
    /// A limit on the whole job, if given.
    public var timeout: Duration?
    /// The job-level retry (the default of every stage).
    public var retry: RetryPolicy
    /// The job-level environment (every stage gets it under its own `env`).
    public var env: [String: String]
    /// The job-level working directory, if given.
    public var cwd: String?
    /// The pipeline, in order; never empty.
    public var stages: [StageDefinition]
    /// When jobs of this definition are submitted by jobd itself (`schedule:`).
    public var schedules: [ScheduleDefinition]
    /// How many of its jobs may run at once across all hosts (`limit:`).
    public var limit: FlowLimit?
    /// How many of its jobs may start per window across all hosts (`rate:`).
    public var rate: FlowRate?
    /// Whether its pool has a limit across hosts (jobd.yaml): its jobs then
    /// get a limit key even without `limit:`.
    public var poolLimited = false
    /// At most one job per key (`unique:`), enforced by the database.
    public var unique: Uniqueness?
    /// The file it came from, and where `name:` (or the file's start) sits.
    public var sourcePosition: SourcePosition

    public init(
        name: String, description: String? = nil, pool: String = DaemonConfiguration.defaultPool,
        timeout: Duration? = nil, retry: RetryPolicy = .default, env: [String: String] = [:],
        cwd: String? = nil, stages: [StageDefinition], schedules: [ScheduleDefinition] = [],
        limit: FlowLimit? = nil, sourcePosition: SourcePosition
    ) {
        self.schedules = schedules
        self.limit = limit
        self.name = name
        self.description = description
        self.pool = pool
        self.timeout = timeout
        self.retry = retry
        self.env = env
        self.cwd = cwd
        self.stages = stages
        self.sourcePosition = sourcePosition
    }

    /// The stage called `name`, if any.
    public func stage(named name: String) -> StageDefinition? {
        stages.first { $0.name == name }
    }
}

/// One stage of a pipeline. Options hold their effective values: the job's
/// `retry`, `env` and `cwd` are already merged in.
public struct StageDefinition: Sendable, Hashable {
    /// 0-based place in the pipeline (the `position` column in SQLite).
    public var position: Int
    /// Unique within the job.
    public var name: String
    public var kind: StageKind
    public var action: Action
    /// The `on:` queue as written; nil means the kind's default.
    public var queueOverride: String?
    /// The limit on one attempt, if given.
    public var timeout: Duration?
    /// The stage's `retry` laid over the job's, key by key.
    public var retry: RetryPolicy
    /// The job's `env` with the stage's `env` laid over it. `JOBD_*`
    /// variables are added by the engine at run time.
    public var env: [String: String]
    /// The stage's `cwd`, else the job's, else nil (jobd's own).
    public var cwd: String?
    /// Whether running it twice is harmless. After a crash, a stage that was
    /// in flight runs again if idempotent; otherwise the job fails as
    /// interrupted.
    public var idempotent: Bool
    /// How much of an attempt's stderr is kept (`logs: { max: … }`, the
    /// stage's, else the job's, else 1 MiB): beyond it, the head and the
    /// tail, each half of it.
    public var logLimit: Int
    /// Where the stage's mapping starts in its file.
    public var sourcePosition: SourcePosition

    public static let defaultLogLimit = 1 << 20
    /// The largest `logs: { max: … }` accepted.
    public static let maxLogLimit = ByteSize.mebibytes(256)

    public init(
        position: Int, name: String, kind: StageKind, action: Action, queueOverride: String? = nil,
        timeout: Duration? = nil, retry: RetryPolicy = .default, env: [String: String] = [:],
        cwd: String? = nil, idempotent: Bool = true, logLimit: Int = StageDefinition.defaultLogLimit,
        sourcePosition: SourcePosition
    ) {
        self.logLimit = logLimit
        self.position = position
        self.name = name
        self.kind = kind
        self.action = action
        self.queueOverride = queueOverride
        self.timeout = timeout
        self.retry = retry
        self.env = env
        self.cwd = cwd
        self.idempotent = idempotent
        self.sourcePosition = sourcePosition
    }

    /// The `Q` queue its body runs on: `on:`, else the kind's default
    /// (`map` or `return`, see `StageKind.defaultQueue`).
    public var queue: String { queueOverride ?? kind.defaultQueue }
}
