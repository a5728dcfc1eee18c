import Foundation

/// Which jobs to list, newest first, one page at a time.
public struct JobQuery: Sendable, Hashable {
    /// Only jobs in one of these states; `nil` for all.
    public var states: Set<JobState>?
    /// Only jobs of this definition; `nil` for all.
    public var definition: String?
    /// Only the job with this idempotency key (`submit --key`), exactly.
    public var key: String?
    /// Only jobs created at or after this time.
    public var createdSince: Date?
    /// Only jobs created before this time.
    public var createdUntil: Date?
    /// At most this many jobs (1…1000).
    public var limit: Int
    /// Only jobs older than this id: pass the previous page's ``JobPage/nextCursor``.
    public var before: Int64?
    /// Whether the jobs carry their input, result and whole error. Without
    /// (a list that shows none of them, as the dashboard's), `input` and
    /// `result` are nil and `error` is its first ``summaryErrorCharacters``:
    /// a page of a thousand jobs of 1 MiB values reads kilobytes, not a gigabyte.
    public var values: Bool

    /// The characters of `error` a job listed without ``values`` keeps.
    public static let summaryErrorCharacters = 4096

    public init(
        states: Set<JobState>? = nil, definition: String? = nil, key: String? = nil, createdSince: Date? = nil,
        createdUntil: Date? = nil, limit: Int = 50, before: Int64? = nil, values: Bool = true
    ) {
        self.states = states
        self.definition = definition
        self.key = key
        self.createdSince = createdSince
        self.createdUntil = createdUntil
        self.limit = limit
        self.before = before
        self.values = values
    }

    /// Pending and running jobs (the `pending_jobs` view).
    public static func pending(definition: String? = nil, limit: Int = 50, before: Int64? = nil) -> JobQuery {
        JobQuery(states: JobState.pendingSet, definition: definition, limit: limit, before: before)
    }

    /// Fulfilled, rejected and cancelled jobs (the `resolved_jobs` view).
    public static func resolved(definition: String? = nil, limit: Int = 50, before: Int64? = nil) -> JobQuery {
        JobQuery(states: JobState.resolvedSet, definition: definition, limit: limit, before: before)
    }
}

/// One page of jobs, newest first.
public struct JobPage: Sendable, Hashable {
    public var jobs: [Job]
    /// Pass as ``JobQuery/before`` for the next page; `nil` on the last page.
    public var nextCursor: Int64?
    /// The rows of the page that could not be read (a column written by
    /// hand holds what jobd cannot read): left out of `jobs`, each with the
    /// store's message naming the row and the column.
    public var unreadable: [UnreadableRow]

    public init(jobs: [Job], nextCursor: Int64?, unreadable: [UnreadableRow] = []) {
        self.jobs = jobs
        self.nextCursor = nextCursor
        self.unreadable = unreadable
    }
}

/// A row a read left out because it cannot be decoded (a
/// ``JobStoreError/Code/badRow``).
public struct UnreadableRow: Sendable, Hashable {
    /// The job the row is, or belongs to, when its id could be read.
    public var jobID: Int64?
    /// What is wrong: the table, the row, the column and what it holds.
    public var message: String

    public init(jobID: Int64?, message: String) {
        self.jobID = jobID
        self.message = message
    }

    public init(_ error: JobStoreError) {
        self.init(jobID: error.jobID, message: error.message)
    }
}

/// What ``JobControlStore/requestCancellation(of:)`` did.
public enum CancellationOutcome: Sendable, Hashable {
    /// The job was pending: it is now cancelled and will never run.
    case cancelled
    /// The job is running: the flag is set, the engine stops it at its next check.
    case requested
    /// The job had already ended in this state; nothing changed.
    case alreadyResolved(JobState)
}
