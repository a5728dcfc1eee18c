import Foundation
import JobValues

/// What the daemon's periodic chores need: pruning old jobs, ending the
/// leases of runners known to be dead, and the leader lease that lets one
/// process among several do a chore.
public protocol JobMaintenanceStore: Sendable {
    /// Deletes resolved jobs that finished before `date`, with their stages,
    /// history and events. Returns how many jobs were deleted.
    func prune(finishedBefore date: Date) async throws -> Int

    /// The owners holding leases on running jobs now, with how many jobs each.
    func leaseOwners() async throws -> [String: Int]

    /// Ends the leases of `owners` at once — runners known to be dead (a
    /// daemon restarted after a crash on the same host) — so that the next
    /// `requeueExpiredLeases` takes their jobs up without waiting for the
    /// leases to run out. Gives how many leases it ended.
    func expireLeases(of owners: [String]) async throws -> Int

    /// Takes, or keeps, the lease on `role` (one name per periodic chore,
    /// e.g. `maintenance`) for `duration` from now: `true` if `owner` holds it
    /// now. Call it again before it expires to keep it; when the holder
    /// stops renewing (it stopped or died), another owner gets it once the
    /// lease ran out. At most one owner holds a role at a time, among every
    /// process using the database.
    func acquireLeadership(of role: String, owner: String, for duration: Duration) async throws -> Bool

    /// Gives up `role` if `owner` holds it, so another owner can take it at once.
    func releaseLeadership(of role: String, owner: String) async throws
}

extension JobMaintenanceStore {
    /// Deletes resolved jobs that finished more than `retention` ago.
    public func prune(olderThan retention: Duration) async throws -> Int {
        try await prune(finishedBefore: Date(timeIntervalSinceNow: -retention.timeInterval))
    }
}
