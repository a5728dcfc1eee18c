import Foundation

/// The right to run a job, held by one owner until `expiresAt`.
///
/// Every write about a running job carries its lease. A write whose lease is
/// no longer the job's current one (it expired and the job was requeued or
/// claimed again) is refused with ``JobStoreError/Code/leaseLost``, so a
/// stalled process cannot overwrite the work of the one that took over.
public struct Lease: Sendable, Hashable {
    public var jobID: Int64
    public var owner: String
    /// The job's claim count when this lease was granted: it tells two leases
    /// of the same owner apart.
    public var claim: Int
    public var expiresAt: Date

    public init(jobID: Int64, owner: String, claim: Int, expiresAt: Date) {
        self.jobID = jobID
        self.owner = owner
        self.claim = claim
        self.expiresAt = expiresAt
    }
}

/// A lease as `requeueExpiredLeases(sparing:)` matches it: without its
/// expiry, which the caller's copy and the database's may read differently.
package struct SparedLease: Hashable {
    package var jobID: Int64
    package var owner: String
    package var claim: Int

    package init(jobID: Int64, owner: String, claim: Int) {
        (self.jobID, self.owner, self.claim) = (jobID, owner, claim)
    }

    package init(_ lease: Lease) {
        self.init(jobID: lease.jobID, owner: lease.owner, claim: lease.claim)
    }
}

/// A job handed to an engine by ``JobRunStore/claim(pool:owner:limit:leaseDuration:)``.
public struct ClaimedJob: Sendable, Hashable {
    public var job: Job
    /// The stage plan and what was already recorded, in pipeline order.
    public var stages: [Stage]
    public var lease: Lease

    public init(job: Job, stages: [Stage], lease: Lease) {
        self.job = job
        self.stages = stages
        self.lease = lease
    }

    /// Where to resume: the first stage without a fulfilled result
    /// (0 for a fresh job; `stages.count` if every stage is fulfilled).
    public var resumePosition: Int {
        stages.firstIndex { $0.state != .fulfilled } ?? stages.count
    }

    /// The value to feed the stage at ``resumePosition``: the value of the
    /// last fulfilled stage before it, or the job's input.
    public var resumeValue: Data? {
        let position = resumePosition
        return position == 0 ? job.input : stages[position - 1].value
    }
}

/// What ``JobRunStore/renew(_:leaseDuration:)`` did.
public struct LeaseRenewal: Sendable, Hashable {
    /// The leases that were still held, with their new expiry.
    public var renewed: [Lease]
    /// Jobs whose lease was lost: stop working on them, their writes will be refused.
    public var lost: [Int64]
    /// Renewed jobs for which a cancellation was requested.
    public var cancellationRequested: [Int64]
    /// Jobs still held whose lease was not renewed this time: another
    /// session had their row locked (PostgreSQL). Renew them again; should
    /// the lock outlast the lease, the job may be requeued.
    public var heldUp: [Int64]

    public init(renewed: [Lease], lost: [Int64], cancellationRequested: [Int64], heldUp: [Int64] = []) {
        self.renewed = renewed
        self.lost = lost
        self.cancellationRequested = cancellationRequested
        self.heldUp = heldUp
    }
}
