import Foundation

/// Child jobs and their join: a stage of a running job (the parent) starts
/// jobs of another definition and resumes with their outcomes once they
/// have ended — PromiseKit's `when(fulfilled:)` / `when(resolved:)` over
/// jobs, kept in the store so that it survives any host's crash.
///
/// A child is an ordinary job (its own pool, retries, timeouts) that also
/// carries `parent_id`, the parent's stage (`parent_stage`) and its place
/// among the stage's items (`item_index`); (parent, stage, item) is unique,
/// so starting the children again after a crash creates none twice.
public protocol JobChildStore: Sendable {
    /// Starts the children of `join.lease`'s job at stage `join.position`
    /// (those not started yet), and in the same transaction either settles
    /// the stage — every child has ended, or (fail-fast) one was rejected or
    /// cancelled, in which case the others still pending are cancelled and
    /// the running ones asked to stop — or makes the parent wait: it goes
    /// back to `pending` with `waiting_on` set to the children still to end,
    /// its lease released; it is claimed again only after the transaction
    /// that ends its last child (or, fail-fast, its first rejected one).
    ///
    /// A child of an earlier attempt of the parent (`jobctl retry`) that did
    /// not fulfil runs again, as a retry of it; one that fulfilled is kept.
    func joinChildren(_ join: ChildJoin, completion: @escaping @Sendable (Result<ChildJoinOutcome, any Error>) -> Void)

    /// The children of `parentID`, in (stage, item) order, without their
    /// values: for `jobctl status` and `jobctl list --parent`.
    func children(of parentID: Int64, limit: Int) async throws -> [Job]
}

/// What a stage starting child jobs asks of the store.
public struct ChildJoin: Sendable, Hashable {
    public var lease: Lease
    /// The parent's stage.
    public var position: Int
    /// The stage's attempt number, for its row.
    public var attempt: Int
    /// The parent's attempt (``Job/attempt``): children of an earlier one that did not fulfil run again.
    public var parentAttempt: Int
    /// Whether the first child rejected or cancelled settles the stage.
    public var failFast: Bool
    /// The children, in item order (their `definition`, `pool`, `input`, `stages`).
    public var children: [NewJob]
    public var at: Date

    public init(
        lease: Lease, position: Int, attempt: Int, parentAttempt: Int, failFast: Bool, children: [NewJob],
        at: Date = Date()
    ) {
        self.lease = lease
        self.position = position
        self.attempt = attempt
        self.parentAttempt = parentAttempt
        self.failFast = failFast
        self.children = children
        self.at = at
    }
}

/// What came of ``JobChildStore/joinChildren(_:completion:)``.
public enum ChildJoinOutcome: Sendable, Hashable {
    /// The parent waits for this many children; its run ends here, unresolved.
    case waiting(children: Int)
    /// The stage settles: every child's outcome, in item order.
    case settled([ChildOutcome])
}

/// How one child ended.
public struct ChildOutcome: Sendable, Hashable {
    public var id: Int64
    public var itemIndex: Int
    /// Resolved, or still pending/running when a fail-fast stage settled early.
    public var state: JobState
    public var result: Data?
    public var error: String?
    public var finishedAt: Date?

    public init(
        id: Int64, itemIndex: Int, state: JobState, result: Data? = nil, error: String? = nil, finishedAt: Date? = nil
    ) {
        self.id = id
        self.itemIndex = itemIndex
        self.state = state
        self.result = result
        self.error = error
        self.finishedAt = finishedAt
    }
}

extension JobChildStore {
    public func joinChildren(_ join: ChildJoin) async throws -> ChildJoinOutcome {
        try await withCheckedThrowingContinuation { continuation in
            joinChildren(join) { continuation.resume(with: $0) }
        }
    }
}

extension JobStoreError {
    /// Why a waiting job's child was cancelled, or a child that had not ended when its parent did.
    package static func parentEndedMessage(_ parentID: Int64) -> String {
        "cancelled: its parent job \(parentID) ended (or was cancelled) before it"
    }

    /// Why a job that runs after job `after` was cancelled.
    package static func dependencyFailedMessage(_ after: Int64, _ state: JobState) -> String {
        "cancelled: job \(after), which it runs after, was \(state.rawValue)"
    }

    package static func siblingRejectedMessage(_ parentID: Int64, position: Int) -> String {
        "cancelled: another child of job \(parentID) (stage \(position)) was rejected, and the stage settles fail-fast"
    }
}
