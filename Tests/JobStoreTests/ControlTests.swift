import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct ControlTests {
    @Test(arguments: StoreKind.allCases)
    func pendingJobIsCancelledAtOnce(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        #expect(try await store.requestCancellation(of: id) == .cancelled)
        let detail = try #require(try await store.job(id))
        #expect(detail.job.state == .cancelled)
        #expect(detail.job.finishedAt != nil)
        #expect(detail.stages.allSatisfy { $0.state == .skipped })
        #expect(try await store.claim(pool: "default", owner: "e", limit: 5, leaseDuration: .seconds(5)).isEmpty)
        #expect(try await store.requestCancellation(of: id) == .alreadyResolved(.cancelled))
        await expectStoreError(.jobNotFound) { try await store.requestCancellation(of: 12345) }
    }

    @Test(arguments: StoreKind.allCases)
    func runningJobGetsTheFlagAndTheEngineCancelsIt(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        try await store.recordStageStart(StageStart(lease: claimed.lease, position: 0))
        #expect(try await store.requestCancellation(of: id) == .requested)
        #expect(try await store.job(id)?.job.cancelRequested == true)
        #expect(try await store.job(id)?.job.state == .running)
        try await store.finish(JobFinish(lease: claimed.lease, outcome: .cancelled("cancelled by jobctl")))
        let detail = try #require(try await store.job(id))
        #expect(detail.job.state == .cancelled)
        #expect(detail.stages.map(\.state) == [.rejected, .skipped, .skipped])
        #expect(detail.stages[0].error?.contains("interrupted") == true)
        #expect(detail.stages.map(\.errorCode) == ["interrupted", nil, nil])
    }

    @Test(arguments: StoreKind.allCases)
    func retryKeepsTheAttemptHistory(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job(input: "in")).id
        var claimed = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        try await store.recordStageResult(
            StageResult(lease: claimed.lease, position: 0, outcome: .fulfilled(Data("v0".utf8)), exitCode: 0))
        try await store.recordStageResult(
            StageResult(
                lease: claimed.lease, position: 1, outcome: .rejected("bad total"), exitCode: 3,
                errorCode: "stage-failed"))
        #expect(try await store.job(id)?.stages.map(\.errorCode) == [nil, "stage-failed", nil])
        await expectStoreError(.invalidState) { try await store.retry(id) }
        try await store.finish(JobFinish(lease: claimed.lease, outcome: .rejected("bad total")))

        let retried = try await store.retry(id)
        #expect(retried.state == .pending)
        #expect(retried.attempt == 2)
        #expect(retried.error == nil && retried.finishedAt == nil)
        let fresh = try #require(try await store.job(id))
        #expect(
            fresh.stages.allSatisfy {
                $0.state == .pending && $0.value == nil && $0.attempts == 0 && $0.errorCode == nil
            })

        let history = try await store.attemptHistory(of: id)
        #expect(history.count == 1)
        #expect(history[0].attempt == 1)
        #expect(history[0].state == .rejected)
        #expect(history[0].error == "bad total")
        #expect(history[0].stages.map(\.state) == [.fulfilled, .rejected, .skipped])
        #expect(history[0].stages[0].value == Data("v0".utf8))
        #expect(history[0].stages[1].exitCode == 3)
        #expect(history[0].stages[1].errorCode == "stage-failed")

        // The second attempt runs from the start and can be retried in turn.
        claimed = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        #expect(claimed.resumePosition == 0)
        #expect(claimed.resumeValue == Data("in".utf8))
        try await store.finish(JobFinish(lease: claimed.lease, outcome: .fulfilled(Data("ok".utf8))))
        _ = try await store.retry(id, delay: .seconds(3600))
        #expect(try await store.attemptHistory(of: id).map(\.state) == [.rejected, .fulfilled])
        // Delayed: not claimable yet.
        #expect(try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func pruneDeletesOldResolvedJobsWithEverythingTheyOwn(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let ids = try await store.submit((0..<1200).map { _ in job() }).map(\.id)
        // Resolve 1,100 of them (one retried, with history and events), leave 100 pending.
        // A claimed batch's writes go at once, so the stores commit them together.
        var resolved: [Int64] = []
        while resolved.count < 1100 {
            let batch = try await store.claim(
                pool: "default", owner: "e", limit: min(100, 1100 - resolved.count), leaseDuration: .seconds(60))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for claimed in batch {
                    group.addTask {
                        try await store.recordStageResult(
                            StageResult(lease: claimed.lease, position: 0, outcome: .fulfilled(Data("x".utf8))))
                        try await store.recordEvent(NewEvent(jobID: claimed.job.id, kind: "note", message: "hello"))
                        try await store.finish(JobFinish(lease: claimed.lease, outcome: .fulfilled(nil)))
                    }
                }
                try await group.waitForAll()
            }
            resolved += batch.map(\.job.id)
        }
        _ = try await store.retry(resolved[0])
        // Claimed by run_at: the 100 jobs waiting since the start come first; the rest stay running.
        let claimedAgain = try await store.claim(pool: "default", owner: "e", limit: 200, leaseDuration: .seconds(60))
        #expect(claimedAgain.count == 101)
        let again = try #require(claimedAgain.first { $0.job.id == resolved[0] })
        try await store.finish(JobFinish(lease: again.lease, outcome: .rejected("no")))
        // Age 1,000 of the resolved jobs; the last 100 resolved stay recent.
        let old = Array(resolved.prefix(1000))
        try await store.executeInWriteTransaction(
            "UPDATE jobs SET finished_at = '2001-01-01T00:00:00.000Z' WHERE id IN (\(old.map(String.init).joined(separator: ",")))"
        )
        let cutoff = Date(timeIntervalSinceNow: -86400)
        #expect(try await store.prune(finishedBefore: cutoff) == 1000)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 200)
        for table in ["stages", "events", "job_attempts", "stage_attempts"] {
            let orphans = try await store.count(
                "SELECT count(*) FROM \(table) WHERE job_id NOT IN (SELECT id FROM jobs)")
            #expect(orphans == 0, "\(table) keeps rows of pruned jobs")
        }
        #expect(try await store.count("SELECT count(*) FROM stages") == 600)
        #expect(try await store.job(old[0]) == nil)
        #expect(try await store.job(resolved[1050]) != nil)
        // Unresolved jobs stay, however old.
        #expect(try await store.job(ids.last!)?.job.state == .running)
        #expect(try await store.prune(finishedBefore: cutoff) == 0)
        if kind == .sqlite { #expect(try await store.scalar("PRAGMA foreign_key_check") == nil) }
    }
}

@Suite struct ConfigurationTests {
    @Test(arguments: [(SQLiteJobStoreConfiguration.Synchronous.normal, "1"), (.full, "2")])
    func synchronousSettingReachesTheWriter(
        _ setting: SQLiteJobStoreConfiguration.Synchronous, pragma: String
    ) async throws {
        let folder = try TemporaryFolder()
        let store = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: folder.file("jobs.sqlite"), synchronous: setting))
        #expect(try await store.writerPragma("synchronous") == pragma)
        #expect(try await store.writerPragma("journal_mode") == "wal")
        #expect(try await store.writerPragma("busy_timeout") == "10000")
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func pruneByRetentionKeepsRecentJobs(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        _ = try await store.submit(job())
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        try await store.finish(JobFinish(lease: claimed.lease, outcome: .fulfilled(nil)))
        #expect(try await store.prune(olderThan: .seconds(3600)) == 0)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 1)
    }
}

@Suite struct CheckpointTests {
    func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? -1
    }

    /// Committed pages reach the database file from the background
    /// checkpointer, without the writer's automatic checkpoint (which waits
    /// for ~40 MB of WAL, far more than these writes).
    @Test(arguments: [true, false])
    func backgroundCheckpointCopiesTheWALIntoTheDatabase(enabled: Bool) async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let store = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(
                path: path, checkpointInterval: enabled ? .milliseconds(20) : nil))
        let before = fileSize(path)
        _ = try await store.submit((0..<2000).map { _ in job(input: String(repeating: "x", count: 200)) })
        var after = fileSize(path)
        let deadline = ContinuousClock.now + .seconds(20)
        while enabled && after <= before && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            after = fileSize(path)
        }
        if enabled {
            #expect(after > before, "the database file did not grow: \(before) → \(after)")
        } else {
            // Give a checkpointer, were there one, the time to run.
            try await Task.sleep(for: .milliseconds(200))
            #expect(fileSize(path) == before)
        }
        #expect(fileSize(path + "-wal") > 0)
        try await store.close()
    }
}
