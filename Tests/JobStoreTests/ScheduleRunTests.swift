import Foundation
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Occurrences fired outside the calendar (`jobctl schedules run` and
/// `backfill`), and operators' actions that change no job, on both stores.
@Suite struct ScheduleRunTests {
    let alice = ActionActor(name: "alice", uid: 1000, origin: "jobctl on test")

    func occurrence(_ seconds: TimeInterval) -> NewJob {
        var made = job("nightly")
        made.scheduledFor = Date(timeIntervalSince1970: 1_790_000_000 + seconds)
        return made
    }

    /// Backfilling the same range twice makes each occurrence once; an
    /// occurrence the calendar fired is never made again; each backfill is
    /// one `actions` row with its counts, and each job it made says so.
    @Test(arguments: StoreKind.allCases)
    func backfillTwiceMakesEachOccurrenceOnce(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let runs = try #require(store as? any JobScheduleRunStore)
        // The calendar fired the second occurrence on time.
        let onTime = try await store.submit(occurrence(3600)).id
        let range = (0..<4).map { occurrence(Double($0) * 3600) }

        let first = try await runs.backfill(range, filter: "--from a --to b", by: alice)
        #expect(first.made.count == 3 && first.existing == 1)
        let second = try await runs.backfill(range, filter: "--from a --to b", by: alice)
        #expect(second.made.isEmpty && second.existing == 4)

        #expect(try await store.count("SELECT count(*) FROM jobs WHERE definition = 'nightly'") == 4)
        #expect(try await store.count("SELECT count(*) FROM jobs WHERE fired_by = 'backfill'") == 3)
        #expect(try await store.scalar("SELECT fired_by FROM jobs WHERE id = \(onTime)") == nil)
        let actions = try await store.queryStrings(
            "SELECT verb || ' ' || matched || ' ' || changed || ' ' || actor FROM actions ORDER BY id")
        #expect(actions == ["backfill 4 3 alice", "backfill 4 0 alice"])
        let triggers = try await runs.scheduleTriggers(of: first.made + [onTime])
        #expect(triggers == Dictionary(uniqueKeysWithValues: first.made.map { ($0, ScheduleTrigger.backfill) }))
        #expect(
            try await runs.scheduleFiring(of: first.made[0])
                == ScheduleFiring(trigger: .backfill, action: 1, actor: alice))
        #expect(try await runs.scheduleFiring(of: onTime) == nil, "the calendar fired it")
        let events = try await store.events(of: try #require(first.made.first))
        #expect(events.contains { $0.message.contains("fired by a backfill (--from a --to b) by alice") }, "\(events)")
        let instants = try await runs.scheduledInstants(
            definition: "nightly", from: Date(timeIntervalSince1970: 1_790_000_000),
            through: Date(timeIntervalSince1970: 1_790_000_000 + 7200))
        #expect(instants.count == 3)
    }

    /// A run by hand is a job marked manual, with its `run` action; an
    /// instant that is taken moves it on by a millisecond.
    @Test(arguments: StoreKind.allCases)
    func aRunByHandIsAManualJob(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let runs = try #require(store as? any JobScheduleRunStore)
        let taken = try await store.submit(occurrence(0)).id
        let run = try await runs.runSchedule(occurrence(0), by: alice)
        #expect(run.job != taken)
        // Stored times keep milliseconds: the next one after the taken instant.
        #expect(abs(run.scheduledFor.timeIntervalSince1970 - 1_790_000_000.001) < 0.0005)
        #expect(try await runs.scheduleTriggers(of: [run.job, taken]) == [run.job: .manual])
        #expect(
            try await runs.scheduleFiring(of: run.job)
                == ScheduleFiring(trigger: .manual, action: run.action, actor: alice))
        let detail = try #require(try await store.job(run.job))
        #expect(detail.job.state == .pending)
        let stored = try #require(detail.job.scheduledFor)
        #expect(abs(stored.timeIntervalSince(run.scheduledFor)) < 0.0005)
        #expect(
            try await store.scalar("SELECT verb || ' ' || job_id FROM actions WHERE id = \(run.action)")
                == "run \(run.job)")
        let events = try await store.events(of: run.job)
        #expect(events.contains { $0.message.contains("fired by hand (schedules run) by alice") }, "\(events)")
        // The job actions' list shows only job actions.
        let listed = try await (store as? any JobActionStore)?.actions(limit: 10, before: nil)
        #expect(listed?.isEmpty == true)
    }
}

/// Migration 13 on SQLite rebuilds `actions` (its verb check widens): the
/// audit trail's rows, ids and AUTOINCREMENT counter survive it.
@Suite struct ActionsRebuildTests {
    @Test func theAuditTrailSurvivesTheRebuild() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let before = Schema.migrations.filter { $0.version < 13 }
        let old = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path), migrations: before)
        let alice = ActionActor(name: "alice", uid: 1000, origin: "jobctl on test")
        // A job as version 12 wrote it (today's submit writes columns it lacks).
        try await old.executeInWriteTransaction(
            """
            INSERT INTO jobs (definition, run_at, created_at)
            VALUES ('backup', '2026-11-28T00:00:00.000Z', '2026-11-28T00:00:00.000Z')
            """)
        let id = Int64(try #require(try await old.queryStrings("SELECT max(id) FROM jobs").first ?? nil)) ?? 0
        // Two actions as version 12 wrote them (today's code writes columns it lacks).
        for verb in ["cancel", "retry"] {
            try await old.executeInWriteTransaction(
                """
                INSERT INTO actions (verb, actor, actor_uid, origin, filter, job_id, matched, changed, last_id,
                                     highest_id, started_at, finished_at)
                VALUES ('\(verb)', 'alice', 1000, 'jobctl on test', 'job \(id)', \(id), 1, 1, \(id), \(id),
                        '2026-11-28T00:00:00.000Z', '2026-11-28T00:00:00.000Z');
                INSERT INTO events (job_id, kind, message, created_at, action_id)
                VALUES (\(id), 'action', '\(verb)', '2026-11-28T00:00:00.000Z', last_insert_rowid());
                """)
        }
        // The newest action removed: AUTOINCREMENT never hands its id out again.
        try await old.executeInWriteTransaction("DELETE FROM actions WHERE id = 2")
        try await old.close()

        let store = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path))
        #expect(
            try await store.queryStrings("SELECT id || ' ' || verb || ' ' || actor FROM actions") == ["1 cancel alice"])
        #expect(try await store.queryStrings("SELECT action_id FROM events WHERE action_id IS NOT NULL") == ["1", "2"])
        let next = try await store.recordOperatorAction(.pause, filter: "pool p", definition: nil, by: alice)
        #expect(next == 3)
        #expect(try await store.count("SELECT count(*) FROM sqlite_master WHERE name = 'actions_unfinished'") == 1)
        #expect(try await store.scalar("PRAGMA integrity_check") == "ok")
        try await store.close()
    }
}

/// Resuming a schedule ends its pause rather than deleting it, with the
/// catch-up asked for, on both stores.
@Suite struct ScheduleResumeTests {
    @Test(arguments: StoreKind.allCases)
    func aResumedSchedulesPauseIsEndedAndKept(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let pauses = try #require(store as? any JobSchedulePauseStore)
        _ = try await store.pause(Pause(scope: .schedule, name: "nightly", reason: "freeze", actor: "alice"))
        #expect(try await pauses.schedulePauses().map { $0.pause.until == nil } == [true])
        let resumed = try await pauses.resumeSchedule("nightly", catchUp: "none")
        #expect(resumed?.reason == "freeze" && resumed?.until == nil, "the pause as it held")
        #expect(try await store.pauses().isEmpty, "no longer holds")
        let ended = try await pauses.schedulePauses()
        #expect(ended.count == 1 && ended[0].catchUp == "none" && ended[0].pause.until != nil, "\(ended)")
        #expect(try await pauses.resumeSchedule("nightly", catchUp: nil) == nil, "not paused any more")
        // Pausing again holds again, with the resume's catch-up forgotten.
        _ = try await store.pause(Pause(scope: .schedule, name: "nightly", actor: "alice"))
        #expect(try await pauses.schedulePauses().map(\.catchUp) == [nil])
        // The generic resume of a schedule ends it too.
        #expect(try await store.resume(.schedule, name: "nightly") != nil)
        #expect(try await pauses.schedulePauses().count == 1)
    }
}
