import Foundation
import JobValues
import Spawn
import TestSupport
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

#if canImport(Glibc)
import Glibc
#endif

/// A row another session keeps locked (an operator's `SELECT … FOR UPDATE`
/// in psql, left open) holds up the job it locked and nothing else: the
/// renewal of every other lease goes through at once, the locked job's
/// lease is passed over (not lost), and a write that needs the row fails
/// as busy after the lock timeout instead of holding up the writes behind it.
@Suite(.serialized) struct PostgresLockTests {
    @Test(.timeLimit(.minutes(3)))
    func aLockedJobRowHoldsUpOnlyItsOwnJob() async throws {
        let server = try await TestPostgres.shared()
        var configuration = try await postgresConfiguration()
        configuration.lockTimeout = .seconds(1)
        let scope = StoreScope(postgres: configuration)
        let store = scope.running(try await PostgresJobStore(configuration))
        let ids = try await store.submit([job(input: "locked"), job(input: "free")]).map(\.id)
        let claimed = try await store.claim(pool: "default", owner: "host-a", limit: 2, leaseDuration: .seconds(60))
        let locked = try #require(claimed.first { $0.job.id == ids[0] })
        let free = try #require(claimed.first { $0.job.id == ids[1] })

        let name = "locker_\(configuration.schema)"
        let locker = try server.holdLocks(
            "SELECT id FROM \(configuration.schema).jobs WHERE id = \(ids[0]) FOR UPDATE", name: name)
        defer { _ = locker.stop(grace: .seconds(1)) }
        @Sendable func lockHeld() async throws -> Bool {
            try await store.count(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(name)' AND wait_event = 'PgSleep'")
                == 1
        }
        try await waitUntil("the row is locked", timeout: .seconds(60)) { try await lockHeld() }

        // The locked job's stage result waits for the row, behind it the free job's.
        let lockedResult = StageResult(lease: locked.lease, position: 0, outcome: .fulfilled(Data("a".utf8)))
        let blocked = Task { () -> JobStoreError? in
            do {
                try await store.recordStageResult(lockedResult)
                return nil
            } catch {
                return error as? JobStoreError
            }
        }
        let renewal = try await answered(within: .seconds(60), "the renewal") {
            try await store.renew([locked.lease, free.lease], leaseDuration: .seconds(60))
        }
        #expect(renewal.renewed.map(\.jobID) == [free.job.id])
        #expect(renewal.heldUp == [locked.job.id], "passed over, not lost")
        #expect(renewal.lost.isEmpty)
        try await answered(within: .seconds(60), "the other job's result") {
            try await store.recordStageResult(
                StageResult(lease: free.lease, position: 0, outcome: .fulfilled(Data("b".utf8))))
        }
        let failure = try await answered(within: .seconds(60), "the locked job's result") { await blocked.value }
        #expect(failure?.code == .busy, "\(String(describing: failure))")
        #expect(failure?.code.isRetryable == true)
        #expect(failure?.message.contains("holds a lock") == true, "\(failure?.message ?? "")")
        // The jobd-side operation a user runs on the locked job waits the lock timeout, then says so.
        await expectStoreError(.busy) { try await store.requestCancellation(of: ids[0]) }
        #expect(try await lockHeld(), "all of the above happened while the row stayed locked")
        #expect(try await store.job(ids[1])?.stages.first?.value == Data("b".utf8))

        try await server.releaseLocks(of: name)
        try await waitUntil("the lock is gone", timeout: .seconds(60)) { try await !lockHeld() }
        // Made again, as the engine does, the write goes through.
        try await store.recordStageResult(lockedResult)
        let again = try await store.renew([locked.lease, free.lease], leaseDuration: .seconds(60))
        #expect(Set(again.renewed.map(\.jobID)) == Set(ids) && again.heldUp.isEmpty)
        #expect(try await store.job(ids[0])?.stages.first?.value == Data("a".utf8))
    }

    /// At run time, a missing table privilege names the grants jobd needs,
    /// not CREATE on the database (that is for creating the schema).
    @Test func aRevokedTablePrivilegeNamesTheGrantsJobdNeeds() async throws {
        let server = try await TestPostgres.shared()
        let user = try await server.role("worker")
        var configuration = try await postgresConfiguration()
        let schema = configuration.schema
        let ownerScope = StoreScope(postgres: configuration)
        let owner = ownerScope.running(try await PostgresJobStore(configuration))
        _ = try await owner.submit(job())
        try await server.psql(
            "GRANT USAGE ON SCHEMA \(schema) TO \(user); GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(user); "
                + "GRANT USAGE ON ALL SEQUENCES IN SCHEMA \(schema) TO \(user)", database: "jobd_test")
        configuration.user = user
        let scope = StoreScope(postgres: configuration)
        let store = scope.running(try await PostgresJobStore(configuration))
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "w", limit: 1, leaseDuration: .seconds(60)).first)
        try await server.psql("REVOKE UPDATE ON \(schema).stages FROM \(user)", database: "jobd_test")
        let error = await expectStoreError(.permissionDenied) {
            try await store.recordStageResult(
                StageResult(lease: claimed.lease, position: 0, outcome: .fulfilled(Data())))
        }
        let message = error?.message ?? ""
        #expect(message.contains("stages"), "\(message)")
        #expect(
            message.contains("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(user)"),
            "\(message)")
        #expect(!message.contains("CREATE on the"), "\(message)")
    }
}
