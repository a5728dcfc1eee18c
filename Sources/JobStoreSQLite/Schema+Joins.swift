/// Join countdowns (migration 16 of both stores; see docs/schema.md).
///
/// A waiting parent's count of children still to end lives in a row of its
/// own, `job_joins`, so that a child's end writes a few bytes rather than
/// its parent's `jobs` row: SQLite rewrites a row whole on any update, and
/// a parent's row holds its input — one line per child — so counting down
/// there cost each child's end time in proportion to the number of
/// children. The parent's `jobs.waiting_on` stays above 0 while it waits
/// (it keeps the parent out of `jobs_claim`) and is set to 0 once, by the
/// end that brings `remaining` to 0. Parents waiting when the migration
/// runs get their row from their `waiting_on`.
extension Schema {
    static let version16 = """
        CREATE TABLE job_joins (
            job_id    INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
            stage     INTEGER NOT NULL,
            attempt   INTEGER NOT NULL,
            fail_fast INTEGER NOT NULL DEFAULT 0,
            remaining INTEGER NOT NULL
        );
        INSERT INTO job_joins (job_id, stage, attempt, fail_fast, remaining)
            SELECT id, wait_stage, attempt, wait_fail_fast, waiting_on FROM jobs
            WHERE state = 'pending' AND waiting_on > 0 AND wait_stage IS NOT NULL;
        """
}
