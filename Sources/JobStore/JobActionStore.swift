import Foundation

/// What an operator does to jobs — retry, cancel, delete — one job or a
/// whole selection at a time, each recorded with who did it: the audit trail.
///
/// A bulk action is a row in `actions` (who, what, when, the filter, how
/// many jobs matched and how many it changed) and, for each job it changed,
/// an `events` row naming the action. It works in batches, each committed
/// with the action's progress (the highest id handled), so that a long
/// action never holds one long transaction, and a run that was interrupted
/// is finished by the next one with the same verb and filter: a job is
/// changed once, even when it matches again afterwards (a retried job that
/// failed again).
public protocol JobActionStore: Sendable {
    /// The unfinished action with this verb and filter text, if any: what an
    /// interrupted run left.
    func unfinishedAction(_ verb: ActionVerb, filter: String) async throws -> ActionRecord?

    /// How many jobs with an id in `ids` `selection` matches for `verb`
    /// now, and the highest id among every job (the bound a new action
    /// stops at: jobs submitted after it started are not its business).
    func countMatching(
        _ selection: JobSelection, for verb: ActionVerb, ids: ClosedRange<Int64>
    ) async throws
        -> (count: Int, highestID: Int64)

    /// The ids of the jobs `selection` matches for `verb`, in ascending order, after `afterID`, at most `limit`.
    func idsMatching(
        _ selection: JobSelection, for verb: ActionVerb, after afterID: Int64, limit: Int
    ) async throws
        -> [Int64]

    /// Records a new bulk action, not yet applied to any job.
    func startAction(_ start: ActionStart) async throws -> ActionRecord

    /// Applies `action` to its next batch of at most `batchSize` matching
    /// jobs, in one transaction with its progress; gives the action as it
    /// stands after the batch (``ActionRecord/isFinished`` once no job is
    /// left). Safe to call from several processes at once: each batch reads
    /// the progress inside its transaction.
    func continueAction(_ id: Int64, batchSize: Int) async throws -> ActionRecord

    /// Records an action already done on one job (`jobctl retry 42`, done
    /// by ``JobStore``'s own operations): the `actions` row and the job's event.
    func recordSingleAction(_ verb: ActionVerb, job id: Int64, by actor: ActionActor) async throws -> ActionRecord

    /// The newest actions first, before the action `before` (for paging).
    func actions(limit: Int, before: Int64?) async throws -> [ActionRecord]
}

/// What an action does to each job it selects.
public enum ActionVerb: String, Sendable, Hashable, CaseIterable {
    /// A resolved job goes back to pending as its next attempt.
    case retry
    /// A pending job is cancelled; a running one is flagged for its engine to stop.
    case cancel
    /// A resolved job is removed with its stages, history and events.
    case delete

    /// The states a job must be in for the verb to apply to it.
    public var applicableStates: Set<JobState> {
        switch self {
        case .retry, .delete: JobState.resolvedSet
        case .cancel: JobState.pendingSet
        }
    }

    /// The word in events and messages: `retried`, `cancelled`, `deleted`.
    public var pastTense: String {
        switch self {
        case .retry: "retried"
        case .cancel: "cancelled"
        case .delete: "deleted"
        }
    }
}

/// Who acted, and from where: a user name (or `uid N` when the uid has no
/// name), the uid when known, and the way in (`jobctl on web-1`,
/// `dashboard from 10.0.0.7`).
public struct ActionActor: Sendable, Hashable {
    public var name: String
    public var uid: Int?
    public var origin: String

    public init(name: String, uid: Int?, origin: String) {
        self.name = name
        self.uid = uid
        self.origin = origin
    }

    /// `alice (uid 1000) via jobctl on web-1`.
    public var description: String {
        let id = uid.map { " (uid \($0))" } ?? ""
        return "\(name)\(id) via \(origin)"
    }
}

/// Which jobs an action (or a list) selects: every condition given must
/// hold. Times are absolute, so that an interrupted action selects, when
/// resumed, what it selected when it started.
public struct JobSelection: Sendable, Hashable {
    /// Only this job.
    public var jobID: Int64?
    /// Only these states (intersected with the verb's ``ActionVerb/applicableStates``); `nil` for all.
    public var states: Set<JobState>?
    public var definition: String?
    /// The job's idempotency key (`submit --key`), exactly.
    public var key: String?
    /// Created at or after this time.
    public var createdSince: Date?
    /// Created before this time.
    public var createdUntil: Date?
    /// Holding every word of this text in the input, result, error or key (see ``JobSearchStore``).
    public var match: String?
    /// Only the children of this job (`jobs.parent_id`).
    public var parentID: Int64?
    /// Only the jobs of this pool.
    public var pool: String?

    public init(
        jobID: Int64? = nil, states: Set<JobState>? = nil, definition: String? = nil, key: String? = nil,
        createdSince: Date? = nil, createdUntil: Date? = nil, match: String? = nil, parentID: Int64? = nil,
        pool: String? = nil
    ) {
        self.pool = pool
        self.match = match
        self.parentID = parentID
        self.jobID = jobID
        self.states = states
        self.definition = definition
        self.key = key
        self.createdSince = createdSince
        self.createdUntil = createdUntil
    }

    /// States as `actions.states` keeps them: names joined by commas; NULL for every state.
    package static func statesText(_ states: Set<JobState>?) -> String? {
        states.map { states in JobState.allCases.filter(states.contains).map(\.rawValue).joined(separator: ",") }
    }

    package static func states(_ text: String?) -> Set<JobState>? {
        text.map { Set($0.split(separator: ",").compactMap { JobState(rawValue: String($0)) }) }
    }

    /// The states a job must be in to be selected for `verb`, in a stable order (empty: none can match).
    public func states(for verb: ActionVerb) -> [JobState] {
        let allowed = verb.applicableStates.intersection(states ?? Set(JobState.allCases))
        return JobState.allCases.filter(allowed.contains)
    }
}

/// A bulk action about to start.
public struct ActionStart: Sendable, Hashable {
    public var verb: ActionVerb
    public var actor: ActionActor
    /// The filter as the operator wrote it (`--state rejected --since 1h`):
    /// what an interrupted run is found again by.
    public var filter: String
    public var selection: JobSelection
    /// How many jobs matched when it started.
    public var matched: Int
    /// The highest job id when it started: jobs above it are left alone.
    public var highestID: Int64

    public init(
        verb: ActionVerb, actor: ActionActor, filter: String, selection: JobSelection, matched: Int, highestID: Int64
    ) {
        self.verb = verb
        self.actor = actor
        self.filter = filter
        self.selection = selection
        self.matched = matched
        self.highestID = highestID
    }
}

/// An `actions` row.
public struct ActionRecord: Sendable, Hashable {
    public var id: Int64
    public var verb: ActionVerb
    public var actor: ActionActor
    public var filter: String
    public var selection: JobSelection
    public var matched: Int
    /// How many jobs it changed so far.
    public var changed: Int
    /// The highest job id handled so far: the next batch starts above it.
    public var lastID: Int64
    public var highestID: Int64
    public var startedAt: Date
    public var finishedAt: Date?

    public var isFinished: Bool { finishedAt != nil }

    public init(
        id: Int64, verb: ActionVerb, actor: ActionActor, filter: String, selection: JobSelection, matched: Int,
        changed: Int, lastID: Int64, highestID: Int64, startedAt: Date, finishedAt: Date?
    ) {
        self.id = id
        self.verb = verb
        self.actor = actor
        self.filter = filter
        self.selection = selection
        self.matched = matched
        self.changed = changed
        self.lastID = lastID
        self.highestID = highestID
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }

    /// The message of the event each changed job gets:
    /// `retried by alice (uid 1000) via jobctl on web-1 (action 7)`.
    public var eventMessage: String {
        "\(verb.pastTense) by \(actor.description) (action \(id))"
    }
}

extension ActionRecord {
    /// The `events.kind` of a job's event that an action changed it.
    public static let eventKind = "action"

    /// The largest batch ``JobActionStore/continueAction(_:batchSize:)`` takes.
    public static let maxBatchSize = 1000
}
