import Foundation
import JobValues

/// One stage of a job's plan, known from its definition at submit time.
public struct StagePlan: Sendable, Hashable {
    public var name: String
    /// The kind key of the stage (`firstly`, `then`, `map`, `done`, `catch`, …).
    public var kind: String

    public init(name: String, kind: String) {
        self.name = name
        self.kind = kind
    }
}

/// What to submit: a job of a definition, with its input and stage plan.
public struct NewJob: Sendable, Hashable {
    public var definition: String
    public var pool: String
    public var input: Data?
    /// Higher runs first; jobs of equal priority run oldest first.
    public var priority: Int
    /// The job is not claimed before this time; `nil` means now.
    public var runAt: Date?
    /// A second submit of the same definition with the same key returns the
    /// existing job instead of creating one (as long as it was not pruned).
    public var idempotencyKey: String?
    /// The pipeline, in order: one `stages` row each, created `pending`.
    public var stages: [StagePlan]
    /// The schedule occurrence this job fires for (`jobs.scheduled_for`).
    /// (definition, scheduledFor) is unique: a second submit of the same
    /// occurrence — from this host or another — returns the existing job
    /// with `created: false`, as an idempotency key does.
    public var scheduledFor: Date?
    /// The key its definition's concurrency limit counts it under
    /// (`jobs.limit_key`); `nil` when the definition has no `limit:`.
    public var limitKey: String?
    /// Jobs this one runs after (`jobctl submit --after`): it is not
    /// claimed before they have all fulfilled; if one is rejected or
    /// cancelled it is cancelled, with a reason naming that job — unless
    /// `afterAnyEnd`, when it runs once they have all ended, however.
    public var after: [Int64] = []
    public var afterAnyEnd = false
    /// Its definition's `unique:`: at most one job holds this key at a
    /// time (`jobs.unique_key`); `nil` without `unique:`.
    public var unique: UniqueKey?

    public init(
        definition: String,
        pool: String = "default",
        input: Data? = nil,
        priority: Int = 0,
        runAt: Date? = nil,
        idempotencyKey: String? = nil,
        scheduledFor: Date? = nil,
        stages: [StagePlan]
    ) {
        self.definition = definition
        self.pool = pool
        self.input = input
        self.priority = priority
        self.runAt = runAt
        self.idempotencyKey = idempotencyKey
        self.scheduledFor = scheduledFor
        self.stages = stages
    }

    /// Same, delayed by `delay` from now.
    public init(
        definition: String,
        pool: String = "default",
        input: Data? = nil,
        priority: Int = 0,
        delay: Duration,
        idempotencyKey: String? = nil,
        stages: [StagePlan]
    ) {
        self.init(
            definition: definition, pool: pool, input: input, priority: priority,
            runAt: Date(timeIntervalSinceNow: delay.timeInterval),
            idempotencyKey: idempotencyKey, stages: stages)
    }
}

/// A job's unique key, and how it is held (a definition's `unique:`).
///
/// A job holds its key from its submit while it is pending, or running
/// under a live lease when `whileRunning`; with `period`, it holds it at
/// least that long after its submit, even once it has ended. A submit of
/// a key held by another job creates nothing: it returns that job, after
/// applying `onConflict` to it.
public struct UniqueKey: Sendable, Hashable {
    public enum OnConflict: Sendable, Hashable {
        /// The holder is left as it is.
        case skip
        /// A pending holder gets the new job's input (and the limit key computed from it).
        case replaceInput
        /// A pending holder gets the new job's run time.
        case reschedule
    }

    public var key: String
    public var whileRunning: Bool
    public var period: Duration?
    public var onConflict: OnConflict

    public init(key: String, whileRunning: Bool = true, period: Duration? = nil, onConflict: OnConflict = .skip) {
        self.key = key
        self.whileRunning = whileRunning
        self.period = period
        self.onConflict = onConflict
    }
}

/// The outcome of submitting one job.
public struct Submission: Sendable, Hashable {
    public var id: Int64
    /// `false` when the idempotency key, the schedule occurrence
    /// (``NewJob/scheduledFor``) or the unique key (``NewJob/unique``)
    /// matched an existing job, whose id is `id`.
    public var created: Bool
    /// `true` when `id` is the job holding the new job's unique key.
    public var duplicate: Bool

    public init(id: Int64, created: Bool, duplicate: Bool = false) {
        self.id = id
        self.created = created
        self.duplicate = duplicate
    }
}
