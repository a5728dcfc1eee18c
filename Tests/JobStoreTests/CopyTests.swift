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
        let newer = try await Self.addNewerData(to: sqlite, logOf: ids[1])
        try await sqlite.close()

        let configuration = try await postgresConfiguration()
        let report = try await PostgresJobStore.copySQLiteDatabase(at: folder.file("jobs.sqlite"), into: configuration)
        let source = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let sourceEvents = try await source.count("SELECT count(*) FROM events")
        #expect(
            report
                == DatabaseCopyReport(
                    jobs: 13, stages: 20, jobAttempts: 1, stageAttempts: 3, events: sourceEvents, stageLogs: 4,
                    actions: 1, jobDependencies: 1))

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
        #expect(try await copy.submit(job()).id == newer.dependent + 1)
        #expect(try await copy.submit(job(key: "order-17")) == Submission(id: ids[2], created: false))
        #expect(try await copy.count("SELECT count(*) FROM events") == sourceEvents)
        #expect(try await copy.recordEventID() > sourceEvents)
        // Records one more action, with its event.
        try await Self.expectNewerData(newer, in: copy, as: source)

        // Only into an empty schema.
        let error = await expectStoreError(.invalidState) {
            try await PostgresJobStore.copySQLiteDatabase(at: folder.file("jobs.sqlite"), into: configuration)
        }
        #expect(
            error?.message.contains("holds 14 job(s) and \(sourceEvents + 2) event(s)") == true,
            "\(error?.message ?? "")")
        try await source.close()
    }
}

/// Data of the newer schema versions: stage logs, the audit trail, child jobs, `--after` dependencies and
/// a rate's starts.
extension CopyTests {
    struct NewerData {
        var logJob: Int64
        var action: ActionRecord
        var parent: Int64
        var dependent: Int64
        /// A job its definition's rate holds back.
        var rateHeld: Int64
    }

    static let onePlan = [StagePlan(name: "work", kind: "then")]
    static let rate = StartRate(count: 1, window: .seconds(3600))
    static let ratedFlow = ClaimFlow(rates: ["rated": rate])

    /// Writes a stage log (stderr and stdout lines, a drop record), a
    /// finished bulk cancel of two jobs, a parent waiting for two children,
    /// a job that runs after the parent, and a rated job started with
    /// another held back by its rate.
    static func addNewerData(to store: SQLiteJobStore, logOf logJob: Int64) async throws -> NewerData {
        let rated = try await store.submit(
            (0..<2).map { _ in NewJob(definition: "rated", pool: "rated", input: nil, stages: onePlan) }
        ).map(\.id)
        let started = try await store.claim(
            pool: "rated", owner: "old-host", limit: 2, leaseDuration: .seconds(60), flow: ratedFlow)
        #expect(started.map(\.job.id) == [rated[0]])

        let at = Date(timeIntervalSince1970: 1_800_000_100.25)
        let batch = StageLogBatch(
            key: StageLogKey(jobID: logJob, jobAttempt: 1, position: 0, attempt: 1),
            lines: [
                StageLogLine(sequence: 0, at: at, bytes: Array("warning: café".utf8)),
                StageLogLine(sequence: 1, at: at, bytes: [0x6f, 0xff, 0x00], stream: .stdout),
                StageLogLine(sequence: 5, at: at + 1, bytes: Array("tail".utf8)),
            ],
            dropped: StageLogDrop(sequence: 2, lines: 3, bytes: 30, at: at))
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            store.writeStageLog(batch) { continuation.resume(with: $0) }
        }

        _ = try await store.submit([
            NewJob(definition: "bulk", pool: "bulk", input: nil, stages: onePlan),
            NewJob(definition: "bulk", pool: "bulk", input: nil, stages: onePlan),
        ])
        let selection = JobSelection(definition: "bulk")
        let (matched, highest) = try await store.countMatching(selection, for: .cancel, ids: 1...Int64.max)
        var action = try await store.startAction(
            ActionStart(
                verb: .cancel, actor: ActionActor(name: "alice", uid: 1000, origin: "jobctl on old-host"),
                filter: "--definition bulk", selection: selection, matched: matched, highestID: highest))
        while !action.isFinished { action = try await store.continueAction(action.id, batchSize: 10) }

        let parent = try await store.submit(NewJob(definition: "parent", pool: "parents", input: nil, stages: onePlan))
            .id
        let claimed = try #require(
            try await store.claim(pool: "parents", owner: "old-host", limit: 1, leaseDuration: .seconds(60)).first)
        let children = ["a", "b"].map {
            NewJob(definition: "child", pool: "kids", input: Data($0.utf8), stages: onePlan)
        }
        #expect(
            try await store.joinChildren(
                ChildJoin(
                    lease: claimed.lease, position: 0, attempt: 1, parentAttempt: claimed.job.attempt,
                    failFast: true, children: children)) == .waiting(children: 2))
        var dependent = NewJob(definition: "after", pool: "later", input: nil, stages: onePlan)
        dependent.after = [parent]
        let dependentID = try await store.submit(dependent).id
        _ = try await store.pause(
            Pause(
                scope: .pool, name: "kids", reason: "disk full", actor: "alice",
                until: Date(timeIntervalSince1970: 1_900_000_000)))
        return NewerData(logJob: logJob, action: action, parent: parent, dependent: dependentID, rateHeld: rated[1])
    }

    /// Reads the newer data back from the copy through the PostgreSQL store's own reads.
    static func expectNewerData(
        _ newer: NewerData, in copy: PostgresJobStore, as source: SQLiteJobStore
    ) async throws {
        let log = try await copy.stageLog(StageLogQuery(jobID: newer.logJob))
        #expect(log == (try await source.stageLog(StageLogQuery(jobID: newer.logJob))))
        #expect(log.map(\.stream) == [.stderr, .stdout, .stderr, .stderr])
        #expect(log.map(\.content)[1...2] == [.line([0x6f, 0xff, 0x00]), .dropped(lines: 3, bytes: 30)])

        #expect(try await copy.actions(limit: 10, before: nil) == [newer.action])
        #expect(newer.action.changed == 2)
        #expect(try await copy.count("SELECT count(*) FROM events WHERE action_id = \(newer.action.id)") == 2)
        // The next action gets an id past the copied ones.
        let next = try await copy.recordSingleAction(
            .retry, job: newer.parent, by: ActionActor(name: "bob", uid: nil, origin: "jobctl on new-host"))
        #expect(next.id == newer.action.id + 1)

        let pauses = try await copy.pauses()
        let sourcePauses = try await source.pauses()
        #expect(pauses.map(\.name) == ["kids"] && pauses == sourcePauses)

        let children = try await copy.children(of: newer.parent, limit: 10)
        #expect(children == (try await source.children(of: newer.parent, limit: 10)))
        #expect(children.map(\.itemIndex) == [0, 1] && children.allSatisfy { $0.parentStage == 0 })
        #expect(try await copy.job(newer.parent)?.job.waitingOn == 2)
        #expect(
            try await copy.count(
                "SELECT count(*) FROM jobs WHERE id = \(newer.parent) AND wait_stage = 0 AND wait_fail_fast") == 1)
        #expect(try await copy.count("SELECT count(*) FROM jobs WHERE parent_attempt = 1") == 2)
        #expect(try await copy.job(newer.dependent)?.job.waitingOn == 1)
        let dependencies = "SELECT count(*) FROM job_dependencies WHERE job_id = \(newer.dependent) AND after_id = "
        #expect(try await copy.count(dependencies + "\(newer.parent)") == 1)

        // The rate's window goes on where it was: the held-back job waits
        // for the same slot, and no host starts it before then.
        let opens = try #require(try await source.nextRateSlot(forJob: newer.rateHeld, rate: rate))
        #expect(try await copy.nextRateSlot(forJob: newer.rateHeld, rate: rate) == opens)
        #expect(
            try await copy.claim(
                pool: "rated", owner: "new-host", limit: 2, leaseDuration: .seconds(60), flow: ratedFlow
            ).isEmpty)
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

extension CopyTests {
    /// Each table of the SQLite schema is copied, or named with the reason
    /// it is not (SQLite's own tables and the search index's are neither).
    @Test func everyTableIsCopiedOrSaidNotToBe() async throws {
        let (sqlite, folder) = try makeStore()
        _ = folder
        let tables = try await sqlite.queryStrings(
            """
            SELECT name FROM sqlite_master
            WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'jobs_search_%'
            """
        ).compactMap { $0 }
        let copied = Set(CopiedTable.all.map(\.name))
        #expect(copied.isDisjoint(with: CopiedTable.notCopied.keys))
        #expect(Set(tables) == copied.union(CopiedTable.notCopied.keys))
        try await sqlite.close()
    }
}

extension PostgresJobStore {
    /// The id the next event gets.
    fileprivate func recordEventID() async throws -> Int64 {
        try await recordEvent(NewEvent(jobID: nil, kind: "probe", message: "after the copy"))
        return Int64(try await queryStrings("SELECT max(id) FROM events").first.flatMap { $0 } ?? "0") ?? 0
    }
}
