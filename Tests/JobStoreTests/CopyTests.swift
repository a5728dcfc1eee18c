import Foundation
import JobValues
import Testing

@testable import JobDatabase
@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Moving up: a SQLite database copied into an empty PostgreSQL schema
/// reads back the same through the protocol, ids and all.
@Suite struct CopyTests {
    @Test func aCopyReadsBackTheSameAndNewIdsComeAfterTheOldOnes() async throws {
        let (sqlite, folder) = try makeStore()
        let binary = Data([0x00, 0xff, 0x41, 0x00, 0x80])
        let ids = try await sqlite.submit([
            job(input: "first"), NewJob(definition: "raw", input: binary, stages: threeStages),
            job(key: "order-17"),
            NewJob(definition: "nightly", scheduledFor: Date(timeIntervalSince1970: 1_800_000_000), stages: []),
            job(input: "later", runAt: Date(timeIntervalSinceNow: 3600)), job(input: "pruned"),
        ]).map(\.id)
        for _ in 0..<2 {
            let claimed = try await sqlite.claim(
                pool: "default", owner: "old-host", limit: 1, leaseDuration: .seconds(60))
            for job in claimed {
                try await sqlite.recordStageResult(
                    StageResult(
                        lease: job.lease, position: 0, outcome: .fulfilled(binary), exitCode: 0, attempt: 1,
                        startedAt: Date()))
                try await sqlite.recordStageResult(
                    StageResult(
                        lease: job.lease, position: 1, outcome: .rejected("café: exit 3"), exitCode: 3,
                        errorCode: "stage-failed"))
                try await sqlite.recordEvent(
                    NewEvent(jobID: job.job.id, position: 1, kind: "note", message: "stage 1 failed"))
                try await sqlite.finish(JobFinish(lease: job.lease, outcome: .rejected("stage 1 failed")))
            }
        }
        _ = try await sqlite.retry(ids[0])
        // The last job is pruned: its id is never given out again, here or after the copy.
        try await sqlite.executeInWriteTransaction("DELETE FROM jobs WHERE id = \(ids[5])")
        try await sqlite.recordEvent(NewEvent(jobID: nil, kind: "daemon", message: "not about a job"))
        _ = try await sqlite.startSchedule(
            definition: "nightly", schedule: "cron: 0 3 * * * @UTC", at: Date(timeIntervalSince1970: 1_800_000_000))
        let marks = try await sqlite.scheduleMarks()
        #expect(marks.count == 1)
        try await sqlite.close()

        let configuration = try await postgresConfiguration()
        let report = try await PostgresJobStore.copySQLiteDatabase(at: folder.file("jobs.sqlite"), into: configuration)
        #expect(report == DatabaseCopyReport(jobs: 5, stages: 12, jobAttempts: 1, stageAttempts: 3, events: 3))

        let source = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let scope = StoreScope(postgres: configuration)
        let copy = scope.running(try await PostgresJobStore(configuration))
        for id in ids.dropLast() {
            let expected = try await source.job(id)
            #expect(try await copy.job(id) == expected, "job \(id)")
            #expect(try await copy.events(of: id) == source.events(of: id), "events of job \(id)")
            #expect(try await copy.attemptHistory(of: id) == source.attemptHistory(of: id), "history of job \(id)")
        }
        #expect(try await copy.list(JobQuery(limit: 100)) == source.list(JobQuery(limit: 100)))
        #expect(try await copy.scheduleMarks() == marks, "schedules go on from where they were")
        #expect(try await copy.submit(job()).id == ids[5] + 1)
        #expect(try await copy.submit(job(key: "order-17")) == Submission(id: ids[2], created: false))
        #expect(try await copy.count("SELECT count(*) FROM events") == 3)
        #expect(try await copy.recordEventID() > 3)

        // Only into an empty schema.
        let error = await expectStoreError(.invalidState) {
            try await PostgresJobStore.copySQLiteDatabase(at: folder.file("jobs.sqlite"), into: configuration)
        }
        #expect(error?.message.contains("holds 6 job(s) and 4 event(s)") == true, "\(error?.message ?? "")")
        try await source.close()
    }
}

extension CopyTests {
    /// A jobd started on the new database before the copy (to try the URL)
    /// leaves schedule marks but no job: the copy goes in, and its marks
    /// replace those (nothing fired there).
    @Test func aSchemaWithScheduleMarksButNoJobsTakesTheCopy() async throws {
        let (sqlite, folder) = try makeStore()
        let id = try await sqlite.submit(job(input: "moved")).id
        let fired = Date(timeIntervalSince1970: 1_800_000_000)
        _ = try await sqlite.startSchedule(definition: "disk-check", schedule: "every: 15m", at: fired)
        try await sqlite.close()

        let configuration = try await postgresConfiguration()
        let scope = StoreScope(postgres: configuration)
        let tried = scope.running(try await PostgresJobStore(configuration))
        _ = try await tried.startSchedule(definition: "disk-check", schedule: "every: 15m", at: fired + 86400)
        _ = try await tried.startSchedule(definition: "only-here", schedule: "every: 1h", at: fired + 86400)
        await tried.close()

        let report = try await PostgresJobStore.copySQLiteDatabase(at: folder.file("jobs.sqlite"), into: configuration)
        #expect(report.jobs == 1)
        let copy = scope.running(try await PostgresJobStore(configuration))
        #expect(try await copy.job(id)?.job.input == Data("moved".utf8))
        let marks = Dictionary(
            uniqueKeysWithValues: try await copy.scheduleMarks().map { ($0.definition, $0.firedThrough) })
        #expect(marks == ["disk-check": fired, "only-here": fired + 86400])
    }
}

extension PostgresJobStore {
    /// The id the next event gets.
    fileprivate func recordEventID() async throws -> Int64 {
        try await recordEvent(NewEvent(jobID: nil, kind: "probe", message: "after the copy"))
        return Int64(try await queryStrings("SELECT max(id) FROM events").first.flatMap { $0 } ?? "0") ?? 0
    }
}
