import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct DashboardQueryTests {
    /// Runs one job to the end, finishing at `at`.
    func finish(
        _ store: SQLiteJobStore, _ definition: String, _ outcome: JobOutcome, at: Date, pool: String = "default"
    )
        async throws
    {
        _ = try await store.submit(job(definition, pool: pool))
        let claimed = try await store.claim(pool: pool, owner: "test", limit: 1, leaseDuration: .seconds(60))
        let lease = try #require(claimed.first).lease
        try await store.finish(JobFinish(lease: lease, outcome: outcome, at: at))
    }

    @Test func countsResolvedJobsPerMinuteAndState() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        let base = try #require(Timestamp.date("2026-03-01T10:00:00.000Z"))
        try await finish(store, "a", .fulfilled(nil), at: base.addingTimeInterval(5))
        try await finish(store, "a", .fulfilled(nil), at: base.addingTimeInterval(59.999))
        try await finish(store, "b", .rejected("no"), at: base.addingTimeInterval(30))
        try await finish(store, "a", .cancelled(nil), at: base.addingTimeInterval(61))
        // Outside the window: one before its first minute, one at its end.
        try await finish(store, "a", .fulfilled(nil), at: base.addingTimeInterval(-0.001))
        try await finish(store, "a", .fulfilled(nil), at: base.addingTimeInterval(600))
        _ = try await store.submit(job("pending"))

        // The start is rounded down to its minute: 10:00:40 counts from 10:00:00.
        let minutes = try await store.resolvedPerMinute(
            from: base.addingTimeInterval(40), to: base.addingTimeInterval(600))
        #expect(
            Set(minutes) == [
                ResolvedMinute(minute: base, state: .fulfilled, count: 2),
                ResolvedMinute(minute: base, state: .rejected, count: 1),
                ResolvedMinute(minute: base.addingTimeInterval(60), state: .cancelled, count: 1),
            ])
        #expect(minutes.map(\.minute) == minutes.map(\.minute).sorted())
        #expect(
            try await store.resolvedPerMinute(from: base.addingTimeInterval(3600), to: base.addingTimeInterval(7200))
                .isEmpty)
    }

    @Test func resolvedPerMinuteReadsTheFinishedIndex() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        let sql = SQLiteJobStore.resolvedPerMinuteSQL
            .replacingOccurrences(of: ">= ?", with: ">= '2026-01-01'").replacingOccurrences(
                of: "< ?", with: "< '2026-01-02'")
        let plan = try await store.queryPlan(sql)
        #expect(plan.contains { $0.contains("USING INDEX jobs_finished (finished_at>? AND finished_at<?)") }, "\(plan)")
    }

    @Test func countsPendingAndRunningJobsByPool() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        #expect(try await store.jobCountsByPool().isEmpty)
        _ = try await store.submit([job(pool: "fast"), job(pool: "fast"), job(pool: "fast"), job(pool: "slow")])
        _ = try await store.claim(pool: "fast", owner: "test", limit: 1, leaseDuration: .seconds(60))
        let claimed = try await store.claim(pool: "slow", owner: "test", limit: 1, leaseDuration: .seconds(60))
        try await store.finish(JobFinish(lease: try #require(claimed.first).lease, outcome: .fulfilled(nil)))
        #expect(try await store.jobCountsByPool() == [PoolJobCounts(pool: "fast", pending: 2, running: 1)])
        _ = try await store.submit(job(runAt: Date(timeIntervalSinceNow: 3600), pool: "slow"))
        #expect(
            try await store.jobCountsByPool() == [
                PoolJobCounts(pool: "fast", pending: 2, running: 1),
                PoolJobCounts(pool: "slow", pending: 1, running: 0),
            ])
    }
}
