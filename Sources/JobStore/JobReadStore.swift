import Foundation

/// What reads need (`jobctl status` and `list`, the dashboard, the
/// metrics): jobs, their stages, history and events, and counts.
public protocol JobReadStore: Sendable {
    /// One job with its stages, or `nil` if there is no such job.
    func job(_ id: Int64) async throws -> JobDetail?

    /// A page of jobs, newest first.
    func list(_ query: JobQuery) async throws -> JobPage

    /// The events of a job, oldest first.
    func events(of jobID: Int64) async throws -> [JobEvent]

    /// The attempts of a job before its current one, oldest first.
    func attemptHistory(of jobID: Int64) async throws -> [JobAttempt]

    /// How many jobs are in each of `states` (every state asked for is a key).
    func countJobs(in states: Set<JobState>) async throws -> [JobState: Int]

    /// Jobs resolved per minute and state, for minutes from `start` (rounded
    /// down to its minute) to before `end`; minutes without any are absent.
    func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute]

    /// Pending and running jobs of each pool that has any, by pool name.
    func jobCountsByPool() async throws -> [PoolJobCounts]

    /// What a job's page shows, read within the query's bounds; nil: no such job.
    func jobPage(_ query: JobPageQuery) async throws -> JobPageRead?

    /// One whole value or error of a job; nil: not there.
    func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data?

    /// Why each of the pending jobs among `ids` waits (``WaitReason``),
    /// judged against `rules`; a job not pending has no entry. A few
    /// queries whatever the number of ids (a list's page).
    func waitReasons(of ids: [Int64], rules: WaitRules) async throws -> [Int64: WaitReason]

    /// How many pending jobs wait for each reason, judged against `rules`
    /// as ``waitReasons(of:rules:)`` judges each: one query over the
    /// pending jobs (and reads of the pauses and of the running jobs).
    func waitingJobCounts(rules: WaitRules) async throws -> [WaitReason.Code: Int]
}

/// A past attempt of a retried job: its outcome and stages as they were.
public struct JobAttempt: Sendable, Hashable {
    public var jobID: Int64
    public var attempt: Int
    public var state: JobState
    public var result: Data?
    public var error: String?
    public var startedAt: Date?
    public var finishedAt: Date?
    /// The stages as they were when the job was retried.
    public var stages: [Stage]

    package init(
        jobID: Int64, attempt: Int, state: JobState, result: Data? = nil, error: String? = nil, startedAt: Date? = nil,
        finishedAt: Date? = nil, stages: [Stage]
    ) {
        self.jobID = jobID
        self.attempt = attempt
        self.state = state
        self.result = result
        self.error = error
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.stages = stages
    }
}

/// How many jobs of one state were resolved in one minute (UTC).
public struct ResolvedMinute: Sendable, Hashable {
    /// The minute's start (seconds are 0).
    public var minute: Date
    public var state: JobState
    public var count: Int

    public init(minute: Date, state: JobState, count: Int) {
        self.minute = minute
        self.state = state
        self.count = count
    }
}

/// The unresolved jobs of one pool in the store (every host's, on a shared database).
public struct PoolJobCounts: Sendable, Hashable {
    public var pool: String
    public var pending: Int
    public var running: Int

    public init(pool: String, pending: Int, running: Int) {
        self.pool = pool
        self.pending = pending
        self.running = running
    }
}
