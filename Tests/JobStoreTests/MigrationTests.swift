import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// The first schema exactly as it was released. Never edit it: a change to
/// the schema is a new migration appended to `Schema.migrations`.
let frozenSchemaVersion1 = """
    CREATE TABLE schema_migrations (
        version    INTEGER PRIMARY KEY,
        name       TEXT NOT NULL,
        applied_at TEXT NOT NULL
    );

    CREATE TABLE jobs (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        definition       TEXT NOT NULL,
        pool             TEXT NOT NULL DEFAULT 'default',
        state            TEXT NOT NULL DEFAULT 'pending'
                         CHECK (state IN ('pending', 'running', 'fulfilled', 'rejected', 'cancelled')),
        priority         INTEGER NOT NULL DEFAULT 0,
        idempotency_key  TEXT,
        input,
        result,
        error            TEXT,
        attempt          INTEGER NOT NULL DEFAULT 1,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        claims           INTEGER NOT NULL DEFAULT 0,
        lease_owner      TEXT,
        lease_expires_at TEXT,
        run_at           TEXT NOT NULL,
        created_at       TEXT NOT NULL,
        started_at       TEXT,
        finished_at      TEXT
    );
    -- claim: the next runnable jobs of a pool, highest priority, then oldest.
    CREATE INDEX jobs_claim ON jobs (pool, priority DESC, run_at, id) WHERE state = 'pending';
    -- listing newest first by state, and by definition and state; crash
    -- recovery finds the running jobs (few: at most the pools' sizes) here.
    CREATE INDEX jobs_state ON jobs (state, id);
    CREATE INDEX jobs_definition_state ON jobs (definition, state, id);
    -- pruning and "what finished when".
    CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
    -- one job per (definition, idempotency key).
    CREATE UNIQUE INDEX jobs_idempotency ON jobs (definition, idempotency_key)
        WHERE idempotency_key IS NOT NULL;

    CREATE TABLE stages (
        job_id      INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        position    INTEGER NOT NULL,
        name        TEXT NOT NULL,
        kind        TEXT NOT NULL,
        state       TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'running', 'fulfilled', 'rejected', 'skipped')),
        value,
        error       TEXT,
        exit_code   INTEGER,
        attempts    INTEGER NOT NULL DEFAULT 0,
        started_at  TEXT,
        finished_at TEXT,
        PRIMARY KEY (job_id, position)
    ) WITHOUT ROWID;

    -- A retried job's earlier attempts: the job's outcome, and its stages as they were.
    CREATE TABLE job_attempts (
        job_id      INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        attempt     INTEGER NOT NULL,
        state       TEXT NOT NULL,
        result,
        error       TEXT,
        started_at  TEXT,
        finished_at TEXT,
        PRIMARY KEY (job_id, attempt)
    );
    CREATE TABLE stage_attempts (
        job_id      INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        attempt     INTEGER NOT NULL,
        position    INTEGER NOT NULL,
        name        TEXT NOT NULL,
        kind        TEXT NOT NULL,
        state       TEXT NOT NULL,
        value,
        error       TEXT,
        exit_code   INTEGER,
        attempts    INTEGER NOT NULL,
        started_at  TEXT,
        finished_at TEXT,
        PRIMARY KEY (job_id, attempt, position)
    );

    CREATE TABLE events (
        id         INTEGER PRIMARY KEY,
        job_id     INTEGER REFERENCES jobs (id) ON DELETE CASCADE,
        position   INTEGER,
        kind       TEXT NOT NULL,
        message    TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX events_job ON events (job_id, id);

    CREATE VIEW pending_jobs AS
        SELECT * FROM jobs WHERE state IN ('pending', 'running');
    CREATE VIEW resolved_jobs AS
        SELECT *,
               CAST(round((julianday(finished_at) - julianday(started_at)) * 86400000) AS INTEGER)
                   AS duration_ms
        FROM jobs WHERE state IN ('fulfilled', 'rejected', 'cancelled');
    """

@Suite struct MigrationTests {
    @Test func firstMigrationIsStillTheReleasedOne() {
        #expect(Schema.migrations.first?.version == 1)
        #expect(Schema.migrations.first?.sql == frozenSchemaVersion1)
        #expect(Schema.migrations.map(\.version) == Array(1...Schema.latestVersion))
    }

    @Test func databaseOfTheFirstSchemaIsUpgradedInPlace() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        // A database as the first release made it, with jobs in it.
        let v1 = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: path),
            migrations: [Migration(version: 1, name: "first", sql: frozenSchemaVersion1)])
        // Jobs as v1 wrote them, in SQL: today's code writes columns v1 lacks.
        let old: [Int64] = [1, 2]
        try await v1.executeInWriteTransaction(oldJobsSQL(inputs: ["made by v1", "second"]))
        try await v1.executeInWriteTransaction(
            "UPDATE stages SET state = 'fulfilled', value = X'ff', attempts = 1 WHERE job_id = \(old[0]) AND position = 0"
        )
        try await v1.close()

        // Today's schema, plus one more step, as a later release would add.
        let later =
            Schema.migrations + [
                Migration(
                    version: Schema.latestVersion + 1, name: "test: a note per job",
                    sql: "ALTER TABLE jobs ADD COLUMN note TEXT; CREATE INDEX jobs_note ON jobs (note);")
            ]
        let upgraded = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path), migrations: later)
        #expect(try await upgraded.scalar("PRAGMA user_version") == String(Schema.latestVersion + 1))
        #expect(try await upgraded.count("SELECT count(*) FROM schema_migrations") == Schema.latestVersion + 1)
        #expect(try await upgraded.count("SELECT count(*) FROM pragma_table_info('jobs') WHERE name = 'note'") == 1)
        for table in ["stages", "stage_attempts"] {
            #expect(
                try await upgraded.count(
                    "SELECT count(*) FROM pragma_table_info('\(table)') WHERE name = 'error_code'") == 1, "\(table)")
        }
        // The old data is there and the store works on it.
        let detail = try #require(try await upgraded.job(old[0]))
        #expect(detail.job.input == Data("made by v1".utf8))
        #expect(detail.stages[0].value == Data([0xff]))
        #expect(detail.stages.allSatisfy { $0.errorCode == nil }, "rows from before version 2 have no code")
        let running = try #require(
            try await upgraded.claim(pool: "default", owner: "v2", limit: 1, leaseDuration: .seconds(60)).first)
        #expect(running.job.id == old[0] && running.resumePosition == 1 && running.resumeValue == Data([0xff]))
        try await upgraded.finish(JobFinish(lease: running.lease, outcome: .fulfilled(Data("done".utf8))))
        #expect(try await upgraded.job(old[0])?.job.state == .fulfilled)
        _ = try await upgraded.submit(job(input: "made after the upgrade"))
        #expect(try await upgraded.scalar("PRAGMA integrity_check") == "ok")
        try await upgraded.close()

        // Opening it again upgrades nothing.
        let again = try SQLiteJobStore(SQLiteJobStoreConfiguration(path: path), migrations: later)
        #expect(try await again.count("SELECT count(*) FROM schema_migrations") == Schema.latestVersion + 1)
        try await again.close()

        // And this release refuses the database the later one upgraded.
        let error = await expectStoreError(.schemaTooNew) { try SQLiteJobStore(path: path) }
        #expect(error?.message.contains("newer jobd") == true)
    }
}

/// Version 3 on a database of version 2: the jobs there get no occurrence,
/// and the new ones are unique per occurrence.
@Suite struct ScheduleMigrationTests {
    @Test func databaseOfTheSecondSchemaGetsOccurrencesAndLeaders() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("jobs.sqlite")
        let v2 = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: path), migrations: Array(Schema.migrations.prefix(2)))
        let old: [Int64] = [1, 2]
        try await v2.executeInWriteTransaction(oldJobsSQL(inputs: ["made by v2", "second"]))
        #expect(try await v2.count("SELECT count(*) FROM pragma_table_info('jobs') WHERE name = 'scheduled_for'") == 0)
        try await v2.close()

        let upgraded = try SQLiteJobStore(path: path)
        #expect(try await upgraded.scalar("PRAGMA user_version") == String(Schema.latestVersion))
        #expect(
            try await upgraded.count("SELECT count(*) FROM pragma_table_info('jobs') WHERE name = 'scheduled_for'") == 1
        )
        #expect(
            try await upgraded.count("SELECT count(*) FROM sqlite_schema WHERE name IN ('leaders', 'jobs_schedule')")
                == 2)
        // The views show the new column without being made anew.
        #expect(
            try await upgraded.count(
                "SELECT count(*) FROM pragma_table_info('pending_jobs') WHERE name = 'scheduled_for'") == 1)
        let detail = try #require(try await upgraded.job(old[0]))
        #expect(detail.job.input == Data("made by v2".utf8) && detail.job.scheduledFor == nil)
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let occurrence = NewJob(definition: "report", scheduledFor: at, stages: threeStages)
        let first = try await upgraded.submit(occurrence)
        let second = try await upgraded.submit(occurrence)
        #expect(first.created && !second.created && second.id == first.id)
        #expect(
            try await upgraded.scalar("SELECT scheduled_for FROM jobs WHERE id = \(first.id)")
                == "2027-01-15T08:00:00.000Z")
        #expect(try await upgraded.acquireLeadership(of: "maintenance", owner: "me", for: .seconds(10)))
        #expect(try await upgraded.scalar("PRAGMA integrity_check") == "ok")
        try await upgraded.close()
    }
}

/// Jobs 1, 2, … with these inputs and three pending stages each, in SQL an
/// older schema takes.
func oldJobsSQL(inputs: [String]) -> String {
    inputs.enumerated().map { index, input in
        let id = index + 1
        return """
            INSERT INTO jobs (id, definition, input, run_at, created_at)
                VALUES (\(id), 'report', '\(input)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
            INSERT INTO stages (job_id, position, name, kind)
                VALUES (\(id), 0, 'fetch', 'then'), (\(id), 1, 'total', 'map'), (\(id), 2, 'publish', 'done');
            """
    }.joined(separator: "\n")
}
