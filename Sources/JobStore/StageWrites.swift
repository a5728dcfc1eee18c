import Foundation

/// A stage is starting an attempt.
public struct StageStart: Sendable, Hashable {
    public var lease: Lease
    public var position: Int
    /// 1-based attempt at this stage; stored in `stages.attempts`.
    public var attempt: Int
    public var at: Date
    /// Nobody waits for this write (the stage is idempotent): a store may
    /// hold it back briefly, to commit it with other writes, and drop it
    /// when the stage's result — which records its attempt and start too —
    /// comes first. The SQLite store holds it up to
    /// ``SQLiteJobStoreConfiguration/deferredWriteWait`` (50 ms).
    public var deferrable: Bool

    public init(lease: Lease, position: Int, attempt: Int = 1, at: Date = Date(), deferrable: Bool = false) {
        self.lease = lease
        self.position = position
        self.attempt = attempt
        self.at = at
        self.deferrable = deferrable
    }
}

/// How a stage ended.
public enum StageOutcome: Sendable, Hashable {
    /// The stage's value: what its action printed, unchanged.
    case fulfilled(Data)
    /// What failed and why (the engine includes the exit status and stderr's tail).
    case rejected(String)
    /// The stage did not run (a `catch` in a fulfilled chain, a stage after a cancellation…).
    case skipped
}

/// A stage ended an attempt.
public struct StageResult: Sendable, Hashable {
    public var lease: Lease
    public var position: Int
    public var outcome: StageOutcome
    /// The exit status of the stage's process, if it ran one.
    public var exitCode: Int32?
    /// For a rejection: why, as a stable code (`stages.error_code`), which a
    /// runner that resumes the job after a crash reads back.
    public var errorCode: String?
    /// 1-based attempt at this stage; stored in `stages.attempts`.
    public var attempt: Int
    /// When the attempt started, for an engine that records start and end in
    /// one write instead of calling ``JobRunStore/recordStageStart(_:completion:)``.
    public var startedAt: Date?
    /// When the attempt ended.
    public var at: Date

    public init(
        lease: Lease, position: Int, outcome: StageOutcome, exitCode: Int32? = nil, errorCode: String? = nil,
        attempt: Int = 1, startedAt: Date? = nil, at: Date = Date()
    ) {
        self.lease = lease
        self.position = position
        self.outcome = outcome
        self.exitCode = exitCode
        self.errorCode = errorCode
        self.attempt = attempt
        self.startedAt = startedAt
        self.at = at
    }
}

/// How a job ended.
public enum JobOutcome: Sendable, Hashable {
    case fulfilled(Data?)
    case rejected(String)
    case cancelled(String?)
}

/// A job is resolved: its lease is released and it joins `resolved_jobs`.
public struct JobFinish: Sendable, Hashable {
    public var lease: Lease
    public var outcome: JobOutcome
    public var at: Date
    /// The job's parent (``Job/parentID``), if it is a child job: its end
    /// counts toward the parent's join, in the same transaction.
    public var parentID: Int64?
    /// Whether the job's definition has stages that start children: those
    /// that have not ended when it does are cancelled with it.
    public var startsChildren: Bool

    public init(
        lease: Lease, outcome: JobOutcome, at: Date = Date(), parentID: Int64? = nil, startsChildren: Bool = false
    ) {
        self.lease = lease
        self.outcome = outcome
        self.at = at
        self.parentID = parentID
        self.startsChildren = startsChildren
    }
}

/// An entry to add to the `events` table.
public struct NewEvent: Sendable, Hashable {
    public var jobID: Int64?
    public var position: Int?
    /// A short stable word: `finalizer-warning`, `requeued`, `stage-retry`…
    public var kind: String
    public var message: String
    public var at: Date

    public init(jobID: Int64?, position: Int? = nil, kind: String, message: String, at: Date = Date()) {
        self.jobID = jobID
        self.position = position
        self.kind = kind
        self.message = message
        self.at = at
    }
}
