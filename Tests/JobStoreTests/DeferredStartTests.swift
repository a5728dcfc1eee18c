import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// An idempotent stage's start is deferrable: on SQLite, held back to join
/// another write's transaction, and dropped when the stage's result comes
/// first. (That a late one keeps off a recorded result, on both stores:
/// StageWriteTests.)
@Suite struct DeferredStartTests {
    private func claimedStore(wait: Duration) async throws -> (SQLiteJobStore, TemporaryFolder, Lease, Int64) {
        let folder = try TemporaryFolder()
        let store = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: folder.file("jobs.sqlite"), deferredWriteWait: wait))
        let id = try await store.submit(job(input: "in")).id
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        return (store, folder, claimed.lease, id)
    }

    /// Records `start` without waiting; `await`ing the returned task waits for its completion.
    private func startWithoutWaiting(
        _ store: SQLiteJobStore, _ start: StageStart
    ) -> Task<Result<Void, any Error>, Never> {
        let done = AsyncStream<Result<Void, any Error>>.makeStream()
        store.recordStageStart(start) { result in
            done.continuation.yield(result)
            done.continuation.finish()
        }
        return Task { await done.stream.first { _ in true }! }
    }

    @Test func aDeferredStartAloneIsCommittedAfterTheWait() async throws {
        let (store, folder, lease, id) = try await claimedStore(wait: .milliseconds(20))
        _ = folder
        let before = store.writerStatistics.writes
        let at = Date(timeIntervalSince1970: 1_800_000_000.5)
        try await store.recordStageStart(StageStart(lease: lease, position: 0, attempt: 1, at: at, deferrable: true))
        let stage = try #require(try await store.job(id)?.stages[0])
        #expect(stage.state == .running)
        #expect(stage.startedAt == at)
        #expect(store.writerStatistics.writes - before == 1)
    }

    @Test func aResultThatComesFirstRecordsTheStartAndDropsIt() async throws {
        // Held back for an hour: only the result can commit it.
        let (store, folder, lease, id) = try await claimedStore(wait: .seconds(3600))
        _ = folder
        let before = store.writerStatistics
        let at = Date(timeIntervalSince1970: 1_800_000_000.5)
        let start = startWithoutWaiting(
            store, StageStart(lease: lease, position: 0, attempt: 2, at: at, deferrable: true))
        try await store.recordStageResult(
            StageResult(
                lease: lease, position: 0, outcome: .fulfilled(Data("42\n".utf8)), exitCode: 0, attempt: 2,
                startedAt: at))
        #expect(try await start.value.get() == ())
        let after = store.writerStatistics
        #expect(after.writes - before.writes == 1, "the start was not written on its own")
        #expect(after.transactions - before.transactions == 1)
        let stage = try #require(try await store.job(id)?.stages[0])
        #expect(stage.state == .fulfilled)
        #expect(stage.value == Data("42\n".utf8))
        #expect(stage.attempts == 2)
        #expect(stage.startedAt == at)
    }

    @Test func aFlushOrACloseCommitsAHeldStart() async throws {
        let (store, folder, lease, id) = try await claimedStore(wait: .seconds(3600))
        let start = startWithoutWaiting(store, StageStart(lease: lease, position: 0, attempt: 1, deferrable: true))
        await store.flush()
        #expect(try await start.value.get() == ())
        #expect(try await store.job(id)?.stages[0].state == .running)

        let second = startWithoutWaiting(store, StageStart(lease: lease, position: 1, attempt: 1, deferrable: true))
        try await store.close()
        #expect(try await second.value.get() == ())
        let reopened = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: folder.file("jobs.sqlite")))
        #expect(try await reopened.job(id)?.stages[1].state == .running)
    }
}
