import Foundation
public import JobStore

/// Everything the pages read: the store's reads (``JobReadStore``) and
/// the daemon's snapshot.
///
/// ``StoreDashboardSource`` implements it over a ``JobReadStore``; a test
/// may implement it over fixed data.
public protocol DashboardDataSource: Sendable {
    /// A page of jobs, newest first (``JobReadStore/list(_:)``).
    func list(_ query: JobQuery) async throws -> JobPage
    /// A page of the jobs that hold every word of `text` and match `query`,
    /// newest first (``JobSearchStore/search(_:_:)``).
    func search(_ text: String, _ query: JobQuery) async throws -> JobPage
    /// What a job's page shows, read within the query's bounds; nil: no such job.
    func jobPage(_ query: JobPageQuery) async throws -> JobPageRead?
    /// One whole value or error of a job; nil: not there.
    func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data?
    func countJobs(in states: Set<JobState>) async throws -> [JobState: Int]
    func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute]
    func jobCountsByPool() async throws -> [PoolJobCounts]
    func snapshot() async -> DashboardSnapshot
    /// Stage log lines of a job (``StageLogStore/stageLog(_:)``).
    func stageLog(_ query: StageLogQuery) async throws -> [StageLogEntry]
    /// A job's child jobs, in (stage, item) order (``JobChildStore/children(of:limit:)``).
    func children(of parentID: Int64, limit: Int) async throws -> [Job]
    /// Why each pending job among `ids` waits (``JobReadStore/waitReasons(of:rules:)``).
    func waitReasons(of ids: [Int64]) async throws -> [Int64: WaitReason]
    /// The pauses that hold now (``JobPauseStore/pauses()``).
    func pauses() async throws -> [Pause]
}

extension DashboardDataSource {
    /// A source without logs shows none.
    public func stageLog(_ query: StageLogQuery) async throws -> [StageLogEntry] { [] }
    /// A source without child jobs shows none.
    public func children(of parentID: Int64, limit: Int) async throws -> [Job] { [] }
    /// A source that cannot judge says no reason.
    public func waitReasons(of ids: [Int64]) async throws -> [Int64: WaitReason] { [:] }
    /// A source without pauses has none.
    public func pauses() async throws -> [Pause] { [] }
}

/// The pages' data: reads from a store, the rest from the daemon.
public struct StoreDashboardSource: DashboardDataSource {
    public let store: any JobReadStore
    private let makeSnapshot: @Sendable () async -> DashboardSnapshot
    private let waitRules: (@Sendable () -> WaitRules)?

    /// - Parameters:
    ///   - snapshot: called once per page: the daemon's pools,
    ///     schedules and build info, and the time to render for.
    ///   - waitRules: what the daemon claims by (its pools and
    ///     definitions' limits), to say why pending jobs wait; nil: no reasons.
    public init(
        store: any JobReadStore, snapshot: @escaping @Sendable () async -> DashboardSnapshot,
        waitRules: (@Sendable () -> WaitRules)? = nil
    ) {
        self.store = store
        self.makeSnapshot = snapshot
        self.waitRules = waitRules
    }

    public func list(_ query: JobQuery) async throws -> JobPage { try await store.list(query) }

    public func search(_ text: String, _ query: JobQuery) async throws -> JobPage {
        guard let search = store as? any JobSearchStore else {
            throw DashboardRequestError("this job store has no search index")
        }
        return try await search.search(text, query)
    }
    public func jobPage(_ query: JobPageQuery) async throws -> JobPageRead? { try await store.jobPage(query) }
    public func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data? {
        try await store.jobValue(id, place)
    }

    public func countJobs(in states: Set<JobState>) async throws -> [JobState: Int] {
        try await store.countJobs(in: states)
    }

    public func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute] {
        try await store.resolvedPerMinute(from: start, to: end)
    }

    public func jobCountsByPool() async throws -> [PoolJobCounts] { try await store.jobCountsByPool() }
    public func snapshot() async -> DashboardSnapshot { await makeSnapshot() }

    public func stageLog(_ query: StageLogQuery) async throws -> [StageLogEntry] {
        guard let logs = store as? any StageLogStore else { return [] }
        return try await logs.stageLog(query)
    }

    public func children(of parentID: Int64, limit: Int) async throws -> [Job] {
        guard let store = store as? any JobChildStore else { return [] }
        return try await store.children(of: parentID, limit: limit)
    }

    public func waitReasons(of ids: [Int64]) async throws -> [Int64: WaitReason] {
        guard let waitRules, !ids.isEmpty else { return [:] }
        return try await store.waitReasons(of: ids, rules: waitRules())
    }

    public func pauses() async throws -> [Pause] {
        guard let store = store as? any JobPauseStore else { return [] }
        return try await store.pauses()
    }
}
