import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// `nextRunAt(pool:)` (the engine's timer to the next delayed job) and
/// `countJobs(in:)` (the engine's status).
@Suite struct ScheduleTests {
    @Test(arguments: StoreKind.allCases)
    func nextRunAtIsTheEarliestPendingRunAtOfThePool(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        #expect(try await store.nextRunAt(pool: "default") == nil)
        let soon = Date(timeIntervalSinceNow: 60)
        let later = Date(timeIntervalSinceNow: 3600)
        // Priorities differ: the earliest run_at is not the first in claim order.
        _ = try await store.submit(job(priority: 9, runAt: later))
        _ = try await store.submit(job(priority: 1, runAt: soon))
        _ = try await store.submit(job(priority: 5, runAt: later + 60))
        _ = try await store.submit(job(runAt: Date(timeIntervalSinceNow: 600), pool: "other"))
        let next = try #require(try await store.nextRunAt(pool: "default"))
        #expect(abs(next.timeIntervalSince(soon)) < 0.002)
        if let store = store as? SQLiteJobStore {  // SQLite's plan for nextRunAt
            let plan = try await store.queryPlan(
                """
                WITH RECURSIVE levels(priority) AS (
                    SELECT max(priority) FROM jobs INDEXED BY jobs_claim
                    WHERE state = 'pending' AND waiting_on = 0 AND pool = 'default'
                    UNION ALL
                    SELECT (SELECT max(priority) FROM jobs INDEXED BY jobs_claim
                            WHERE state = 'pending' AND waiting_on = 0 AND pool = 'default' AND priority < levels.priority)
                    FROM levels WHERE levels.priority IS NOT NULL)
                SELECT min((SELECT run_at FROM jobs INDEXED BY jobs_claim
                            WHERE state = 'pending' AND waiting_on = 0 AND pool = 'default' AND priority = levels.priority
                            ORDER BY run_at LIMIT 1))
                FROM levels WHERE levels.priority IS NOT NULL
                """)
            #expect(!plan.contains { $0.contains("SCAN jobs") }, "no scan of the jobs table: \(plan)")
        }

        // Claimed jobs no longer count.
        let claimed = try await store.claim(pool: "other", owner: "me", limit: 5, leaseDuration: .seconds(30))
        #expect(claimed.isEmpty, "not runnable yet")
        #expect(try await store.nextRunAt(pool: "other") != nil)
    }

    @Test(arguments: StoreKind.allCases)
    func countJobsCountsEachStateAskedFor(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        for _ in 0..<3 { _ = try await store.submit(job()) }
        _ = try await store.claim(pool: "default", owner: "me", limit: 1, leaseDuration: .seconds(30))
        let counts = try await store.countJobs(in: [.pending, .running, .fulfilled])
        #expect(counts == [.pending: 2, .running: 1, .fulfilled: 0])
        #expect(try await store.countJobs(in: []) == [:])
    }
}
