/// The state of a job, as stored in `jobs.state` (see docs/schema.md).
///
/// `pending` (queued, maybe delayed) → `running` (claimed under a lease) →
/// one of the resolved states `fulfilled`, `rejected`, `cancelled`.
public enum JobState: String, Sendable, Hashable, CaseIterable, Codable {
    case pending
    case running
    case fulfilled
    case rejected
    case cancelled

    /// `pending` and `running`: what the `pending_jobs` view shows.
    public static let pendingSet: Set<JobState> = [.pending, .running]
    /// `fulfilled`, `rejected` and `cancelled`: what the `resolved_jobs` view shows.
    public static let resolvedSet: Set<JobState> = [.fulfilled, .rejected, .cancelled]

    public var isResolved: Bool { Self.resolvedSet.contains(self) }
}

/// The state of one stage of a job, as stored in `stages.state`.
public enum StageState: String, Sendable, Hashable, CaseIterable, Codable {
    case pending
    case running
    case fulfilled
    case rejected
    case skipped
}
