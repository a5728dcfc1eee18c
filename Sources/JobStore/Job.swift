import Foundation

/// A job as stored: one row of the `jobs` table.
///
/// Values (`input`, `result`) are the exact bytes a process read or printed;
/// see ``StoredValue`` for how they are kept in SQLite.
public struct Job: Sendable, Hashable {
    public var id: Int64
    public var definition: String
    public var pool: String
    public var state: JobState
    /// Higher runs first.
    public var priority: Int
    public var idempotencyKey: String?
    public var input: Data?
    public var result: Data?
    public var error: String?
    /// 1 for the first run; ``JobControlStore/retry(_:delay:)`` adds one.
    public var attempt: Int
    /// Set by ``JobControlStore/requestCancellation(of:)`` on a running job; the
    /// engine reads it (``LeaseRenewal/cancellationRequested``) and stops the job.
    public var cancelRequested: Bool
    /// How many times the job was claimed; more than `attempt` means it was
    /// requeued after a lost lease (a crash, most of the time).
    public var claims: Int
    public var leaseOwner: String?
    public var leaseExpiresAt: Date?
    /// The job is not claimed before this time.
    public var runAt: Date
    public var createdAt: Date
    public var startedAt: Date?
    public var finishedAt: Date?
    /// The schedule occurrence the job fires for, or `nil` for a job submitted by hand.
    public var scheduledFor: Date?
    /// The job whose stage started this one (a child job), else nil.
    public var parentID: Int64?
    /// The parent's stage (its position) that started this child.
    public var parentStage: Int?
    /// This child's place among its stage's items, from 0.
    public var itemIndex: Int?
    /// How many jobs this one waits for (the children of the stage it is
    /// at); a job is never claimed while it waits.
    public var waitingOn: Int = 0

    package init(
        id: Int64, definition: String, pool: String, state: JobState, priority: Int, idempotencyKey: String? = nil,
        input: Data? = nil, result: Data? = nil, error: String? = nil, attempt: Int, cancelRequested: Bool,
        claims: Int, leaseOwner: String? = nil, leaseExpiresAt: Date? = nil, runAt: Date, createdAt: Date,
        startedAt: Date? = nil, finishedAt: Date? = nil, scheduledFor: Date? = nil
    ) {
        self.id = id
        self.definition = definition
        self.pool = pool
        self.state = state
        self.priority = priority
        self.idempotencyKey = idempotencyKey
        self.input = input
        self.result = result
        self.error = error
        self.attempt = attempt
        self.cancelRequested = cancelRequested
        self.claims = claims
        self.leaseOwner = leaseOwner
        self.leaseExpiresAt = leaseExpiresAt
        self.runAt = runAt
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.scheduledFor = scheduledFor
    }
}

/// One stage of a job: one row of the `stages` table.
public struct Stage: Sendable, Hashable {
    public var jobID: Int64
    /// 0-based order in the pipeline.
    public var position: Int
    public var name: String
    /// The stage's kind key in the definition (`then`, `map`, `catch`, …).
    public var kind: String
    public var state: StageState
    public var value: Data?
    public var error: String?
    public var exitCode: Int32?
    /// Attempts made at this stage in the job's current attempt (0 if never started).
    public var attempts: Int
    public var startedAt: Date?
    public var finishedAt: Date?
    /// Why a rejected stage was rejected, as a stable code (the engine's
    /// `EngineError.Code`: `stage-failed`, `cancelled`, …); nil for a stage
    /// that was not rejected, or rejected before the store kept codes.
    public var errorCode: String?

    package init(
        jobID: Int64, position: Int, name: String, kind: String, state: StageState, value: Data? = nil,
        error: String? = nil, exitCode: Int32? = nil, attempts: Int, startedAt: Date? = nil, finishedAt: Date? = nil,
        errorCode: String? = nil
    ) {
        self.jobID = jobID
        self.position = position
        self.name = name
        self.kind = kind
        self.state = state
        self.value = value
        self.error = error
        self.exitCode = exitCode
        self.attempts = attempts
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.errorCode = errorCode
    }
}

/// A job with its stages in pipeline order.
public struct JobDetail: Sendable, Hashable {
    public var job: Job
    public var stages: [Stage]

    public init(job: Job, stages: [Stage]) {
        self.job = job
        self.stages = stages
    }
}

/// An entry of the `events` table: something worth telling about a job that
/// is not a stage result (a finalizer warning, a requeue after a lost lease…).
public struct JobEvent: Sendable, Hashable {
    public var id: Int64
    public var jobID: Int64?
    public var position: Int?
    public var kind: String
    public var message: String
    public var createdAt: Date

    package init(id: Int64, jobID: Int64? = nil, position: Int? = nil, kind: String, message: String, createdAt: Date) {
        self.id = id
        self.jobID = jobID
        self.position = position
        self.kind = kind
        self.message = message
        self.createdAt = createdAt
    }
}
