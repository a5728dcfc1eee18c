import Foundation
public import JobStore

/// Everything the pages read. The store's reads, two counts the store
/// protocol does not have yet, and the daemon's snapshot.
///
/// ``StoreDashboardSource`` implements it over a ``DashboardStore``; a test
/// may implement it over fixed data.
public protocol DashboardDataSource: Sendable {
    /// A page of jobs, newest first (``JobStore/list(_:)``).
    func list(_ query: JobQuery) async throws -> JobPage
    func job(_ id: Int64) async throws -> JobDetail?
    func attemptHistory(of jobID: Int64) async throws -> [JobAttempt]
    func events(of jobID: Int64) async throws -> [JobEvent]
    func countJobs(in states: Set<JobState>) async throws -> [JobState: Int]
    func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute]
    func jobCountsByPool() async throws -> [PoolJobCounts]
    func snapshot() async -> DashboardSnapshot
}

/// A store the dashboard can read: the ``JobStore`` protocol and the two
/// counts `SQLiteJobStore+Dashboard.swift` adds. When those join the
/// protocol (and the PostgreSQL store has them), this is `JobStore`.
public protocol DashboardStore: JobStore {
    func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute]
    func jobCountsByPool() async throws -> [PoolJobCounts]
}

extension SQLiteJobStore: DashboardStore {}
extension PostgresJobStore: DashboardStore {}

/// The pages' data: reads from a store, the rest from the daemon.
public struct StoreDashboardSource: DashboardDataSource {
    public let store: any DashboardStore
    private let makeSnapshot: @Sendable () async -> DashboardSnapshot

    /// - Parameter snapshot: called once per page: the daemon's pools,
    ///   schedules and build info, and the time to render for.
    public init(store: any DashboardStore, snapshot: @escaping @Sendable () async -> DashboardSnapshot) {
        self.store = store
        self.makeSnapshot = snapshot
    }

    public func list(_ query: JobQuery) async throws -> JobPage { try await store.list(query) }
    public func job(_ id: Int64) async throws -> JobDetail? { try await store.job(id) }
    public func attemptHistory(of jobID: Int64) async throws -> [JobAttempt] { try await store.attemptHistory(of: jobID) }
    public func events(of jobID: Int64) async throws -> [JobEvent] { try await store.events(of: jobID) }

    public func countJobs(in states: Set<JobState>) async throws -> [JobState: Int] {
        try await store.countJobs(in: states)
    }

    public func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute] {
        try await store.resolvedPerMinute(from: start, to: end)
    }

    public func jobCountsByPool() async throws -> [PoolJobCounts] { try await store.jobCountsByPool() }
    public func snapshot() async -> DashboardSnapshot { await makeSnapshot() }
}
