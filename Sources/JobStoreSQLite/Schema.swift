internal import GRDB
import JobStore

/// The database schema, as an ordered list of migrations.
///
/// A migration, once released, never changes: a later version appends a new
/// one. `PRAGMA user_version` holds the number of the last migration applied,
/// and `schema_migrations` lists them with the time they were applied.
/// Migrations run in one `BEGIN IMMEDIATE` transaction, so processes that
/// open a new database at the same moment cannot both apply them.
struct Migration: Sendable {
    var version: Int
    var name: String
    var sql: String
}

package enum Schema {
    static let migrations: [Migration] = [
        Migration(version: 1, name: "jobs, stages, history, events", sql: version1),
        Migration(version: 2, name: "stage error codes", sql: version2),
        Migration(version: 3, name: "schedule occurrences, leader leases", sql: version3),
        Migration(version: 4, name: "schedule marks", sql: version4),
        Migration(version: 5, name: "stage logs", sql: StageLogSchema.sqlite),
        Migration(version: 6, name: "actions: the audit trail", sql: version6),
        Migration(version: 7, name: "search: input, result, error, key", sql: version7),
        Migration(version: 8, name: "stage log streams", sql: StageLogStreamSchema.sqlite),
        Migration(version: 9, name: "concurrency limits: limit keys", sql: version9),
        Migration(version: 10, name: "child jobs and their join", sql: version10),
        Migration(version: 11, name: "pauses", sql: version11),
        Migration(version: 12, name: "actions: the parent a selection names", sql: version12),
        Migration(version: 13, name: "schedules fired by hand, operators' actions", sql: version13),
        Migration(version: 14, name: "rate limits: recent starts", sql: version14),
        Migration(version: 15, name: "unique keys", sql: version15),
        Migration(version: 16, name: "join countdowns", sql: version16),
    ]

    package static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Brings the database up to the last of `migrations`, and refuses one
    /// made by a newer version.
    static func migrate(_ db: Database, path: String, migrations: [Migration] = Schema.migrations) throws {
        let latest = migrations.last?.version ?? 0
        // A quick look without the write lock: nothing to do most of the time.
        let seen = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if seen == latest { return }
        try db.inTransaction(.immediate) {
            let current = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            guard current <= latest else {
                throw JobStoreError(
                    .schemaTooNew,
                    "the database at \(path) has schema version \(current), newer than this jobd's \(latest): "
                        + "it was upgraded by a newer jobd. Use that version, or restore a backup made before the upgrade."
                )
            }
            for migration in migrations where migration.version > current {
                try db.execute(sql: migration.sql)
                try db.execute(
                    sql: "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    arguments: [migration.version, migration.name, Timestamp.now()])
                try db.execute(sql: "PRAGMA user_version = \(migration.version)")
            }
            return .commit
        }
    }

    /// Version 1. Timestamps: ISO-8601 UTC text with milliseconds (see Timestamp).
    /// Values: TEXT when valid UTF-8 without NUL, BLOB otherwise (see StoredValue).
    /// Value columns (`input`, `result`, `value`) are declared without a type:
    /// that gives them no affinity, so SQLite never turns the text `007` or
    /// `1e3` into a number.
    static let version1 = """
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

    /// Version 2: why a stage was rejected, as a stable code beside the
    /// message (`stage-failed`, `stage-timed-out`, `cancelled`,
    /// `job-timed-out`, `interrupted`, …: `EngineError.Code`). A job that
    /// resumes after a crash reads it back, so a rejection that ends the job
    /// (a cancellation, the job's timeout) is not taken, after the restart,
    /// for a stage's own failure that a `recover` stage may turn into a
    /// value. NULL for stages that were not rejected, and for rejections
    /// recorded before this version.
    static let version2 = """
        ALTER TABLE stages ADD COLUMN error_code TEXT;
        ALTER TABLE stage_attempts ADD COLUMN error_code TEXT;
        """

    /// Version 3: `jobs.scheduled_for`, the schedule occurrence a job fires
    /// for (UTC timestamp text, NULL for jobs submitted by hand), unique per
    /// definition so that an occurrence fires once however many jobds share
    /// the database; and `leaders`, one lease per periodic chore (pruning,
    /// rescuing expired leases) so that one process at a time does it.
    /// (SQLite expands `SELECT *` in a view when the view is used: the views
    /// show the new column without being made anew.)
    static let version3 = """
        ALTER TABLE jobs ADD COLUMN scheduled_for TEXT;
        CREATE UNIQUE INDEX jobs_schedule ON jobs (definition, scheduled_for)
            WHERE scheduled_for IS NOT NULL;

        CREATE TABLE leaders (
            role        TEXT PRIMARY KEY,
            owner       TEXT NOT NULL,
            expires_at  TEXT NOT NULL,
            acquired_at TEXT NOT NULL
        );
        """

    /// Version 4: how far each schedule has fired (`ScheduleMark`), so that
    /// what is due after a restart, and what a `catch-up` policy skipped, is
    /// in the database and not in a process's memory.
    static let version4 = """
        CREATE TABLE schedule_marks (
            definition    TEXT NOT NULL,
            schedule      TEXT NOT NULL,
            fired_through TEXT NOT NULL,
            PRIMARY KEY (definition, schedule)
        ) WITHOUT ROWID;
        """
}
