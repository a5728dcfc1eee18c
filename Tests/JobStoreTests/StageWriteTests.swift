import Foundation
import JobValues
import Synchronization
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct StageWriteTests {
    @Test(arguments: StoreKind.allCases)
    func stageStartResultAndFinishAreRecorded(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job(input: "in")).id
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        let lease = claimed.lease
        let started = Date(timeIntervalSince1970: 1_800_000_000.123)
        try await store.recordStageStart(StageStart(lease: lease, position: 0, attempt: 1, at: started))
        var detail = try #require(try await store.job(id))
        #expect(detail.stages[0].state == .running)
        #expect(detail.stages[0].startedAt == started)
        try await store.recordStageResult(
            StageResult(
                lease: lease, position: 0, outcome: .rejected("exit status 2: boom"), exitCode: 2,
                errorCode: "stage-failed",
                attempt: 1))
        #expect(try await store.job(id)?.stages[0].errorCode == "stage-failed")
        try await store.recordStageStart(StageStart(lease: lease, position: 0, attempt: 2))
        #expect(try await store.job(id)?.stages[0].errorCode == nil, "a new attempt clears the last one's code")
        try await store.recordStageResult(
            StageResult(lease: lease, position: 0, outcome: .fulfilled(Data("42\n".utf8)), exitCode: 0, attempt: 2))
        try await store.recordStageResult(
            StageResult(lease: lease, position: 1, outcome: .skipped))
        detail = try #require(try await store.job(id))
        #expect(detail.stages[0].state == .fulfilled)
        #expect(detail.stages[0].value == Data("42\n".utf8))
        #expect(detail.stages[0].error == nil)
        #expect(detail.stages[0].errorCode == nil)
        #expect(detail.stages[0].exitCode == 0)
        #expect(detail.stages[0].attempts == 2)
        #expect(detail.stages[0].finishedAt != nil)
        #expect(detail.stages[1].state == .skipped)

        try await store.finish(JobFinish(lease: lease, outcome: .rejected("stage 2 failed")))
        detail = try #require(try await store.job(id))
        #expect(detail.job.state == .rejected)
        #expect(detail.job.error == "stage 2 failed")
        #expect(detail.job.finishedAt != nil)
        #expect(detail.job.leaseExpiresAt == nil)
        // A resolved job has no pending stage left.
        #expect(detail.stages.map(\.state) == [.fulfilled, .skipped, .skipped])
        // Finishing twice is refused: the lease ended with the job.
        await expectStoreError(.leaseLost) { try await store.finish(JobFinish(lease: lease, outcome: .fulfilled(nil))) }
    }

    @Test(arguments: StoreKind.allCases)
    func aDeferrableStartNeverGoesOverAResult(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        let lease = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first
        ).lease
        try await store.recordStageResult(
            StageResult(lease: lease, position: 0, outcome: .fulfilled(Data("done".utf8)), exitCode: 0, attempt: 1))
        // As a start made again after a store error would arrive: late.
        try await store.recordStageStart(StageStart(lease: lease, position: 0, attempt: 1, deferrable: true))
        var stage = try #require(try await store.job(id)?.stages[0])
        #expect(stage.state == .fulfilled)
        #expect(stage.value == Data("done".utf8))
        // An awaited start (a new attempt) still clears an earlier result,
        // and a deferrable one still records a stage that has none.
        try await store.recordStageStart(StageStart(lease: lease, position: 0, attempt: 2))
        try await store.recordStageStart(StageStart(lease: lease, position: 1, attempt: 1, deferrable: true))
        stage = try #require(try await store.job(id)?.stages[0])
        #expect(stage.state == .running)
        #expect(stage.attempts == 2)
        #expect(try await store.job(id)?.stages[1].state == .running)
        await expectStoreError(.invalidArgument) {
            try await store.recordStageStart(StageStart(lease: lease, position: 9, attempt: 1, deferrable: true))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func writeToMissingStageSaysSo(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        _ = try await store.submit(job())
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        let error = await expectStoreError(.invalidArgument) {
            try await store.recordStageResult(StageResult(lease: claimed.lease, position: 7, outcome: .skipped))
        }
        #expect(error?.message.contains("3 stages") == true)
    }

    /// Every acknowledged write is visible to a fresh connection the moment
    /// its completion runs, and writes from many jobs share transactions.
    @Test(arguments: StoreKind.allCases)
    func acknowledgementComesAfterCommit(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        _ = try await store.submit((0..<64).map { _ in job() })
        let claimed = try await store.claim(pool: "default", owner: "e", limit: 64, leaseDuration: .seconds(60))
        let observer = try await scope.openAnother()
        let commitsBefore = try await store.count("SELECT count(*) FROM jobs")  // warm the reader
        _ = commitsBefore
        let unseen = Mutex<[String]>([])
        let acknowledged = Mutex(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for job in claimed {
                let value = "v\(job.job.id)"
                store.recordStageResult(
                    StageResult(lease: job.lease, position: 0, outcome: .fulfilled(Data(value.utf8)))
                ) { result in
                    // Runs on the store's completion queue: look with another connection, now.
                    let stored =
                        try? observer.queryStringsNow(
                            "SELECT value FROM stages WHERE job_id = \(job.job.id) AND position = 0"
                        ).first ?? nil
                    if case .failure = result { unseen.withLock { $0.append("\(job.job.id) failed") } }
                    if stored != value { unseen.withLock { $0.append("\(job.job.id): \(stored ?? "nil")") } }
                    if acknowledged.withLock({
                        $0 += 1
                        return $0
                    }) == claimed.count {
                        done.resume()
                    }
                }
            }
        }
        #expect(unseen.withLock { $0 }.isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func oneFailingWriteDoesNotFailItsTransactionNeighbours(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind, maxValueBytes: 10)
        _ = scope
        _ = try await store.submit((0..<3).map { _ in job() })
        let claimed = try await store.claim(pool: "default", owner: "e", limit: 3, leaseDuration: .seconds(60))
        let outcomes = Mutex<[Int: Bool]>([:])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for (index, job) in claimed.enumerated() {
                // The middle one is over the cap.
                let value = Data(repeating: 97, count: index == 1 ? 11 : 5)
                store.recordStageResult(StageResult(lease: job.lease, position: 0, outcome: .fulfilled(value))) {
                    result in
                    let count = outcomes.withLock {
                        if case .success = result { $0[index] = true } else { $0[index] = false }
                        return $0.count
                    }
                    if count == 3 { done.resume() }
                }
            }
        }
        #expect(outcomes.withLock { $0 } == [0: true, 1: false, 2: true])
        #expect(try await store.job(claimed[0].job.id)?.stages[0].state == .fulfilled)
        #expect(try await store.job(claimed[1].job.id)?.stages[0].state == .pending)
        #expect(try await store.job(claimed[2].job.id)?.stages[0].state == .fulfilled)
    }

    @Test(arguments: StoreKind.allCases)
    func eventsAreRecordedInOrder(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        try await store.recordEvent(
            NewEvent(jobID: id, position: 1, kind: "finalizer-warning", message: "pending promise deallocated"))
        try await store.recordEvent(NewEvent(jobID: id, kind: "note", message: "second"))
        try await store.recordEvent(NewEvent(jobID: nil, kind: "daemon", message: "not about a job"))
        let events = try await store.events(of: id)
        #expect(events.map(\.kind) == ["finalizer-warning", "note"])
        #expect(events[0].position == 1)
        #expect(events[0].message == "pending promise deallocated")
        await expectStoreError(.jobNotFound) {
            try await store.recordEvent(NewEvent(jobID: 999, kind: "x", message: "y"))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func closedStoreRefusesWrites(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        try await store.close()
        await expectStoreError(.closed) { try await store.submit(job()) }
    }
}
