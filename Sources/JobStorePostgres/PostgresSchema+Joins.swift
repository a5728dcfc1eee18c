/// Join countdowns (migration 16; the twin of SQLite's `Schema.version16`,
/// see docs/schema.md). A child's end counts down a small row of its own
/// rather than updating its parent's `jobs` row: `remaining` is in no
/// index, so the update stays a heap-only one, and the parent's row
/// changes once, when its wait ends.
extension PostgresSchema {
    static let version16 = """
        CREATE TABLE {s}.job_joins (
            job_id    bigint PRIMARY KEY REFERENCES {s}.jobs (id) ON DELETE CASCADE,
            stage     integer NOT NULL,
            attempt   integer NOT NULL,
            fail_fast boolean NOT NULL DEFAULT false,
            remaining integer NOT NULL
        );
        INSERT INTO {s}.job_joins (job_id, stage, attempt, fail_fast, remaining)
            SELECT id, wait_stage, attempt, wait_fail_fast, waiting_on FROM {s}.jobs
            WHERE state = 'pending' AND waiting_on > 0 AND wait_stage IS NOT NULL;
        """
}
