extension Schema {
    /// Child jobs and their join (see `JobChildStore`). A child carries its
    /// parent (`parent_id`), the parent's stage that started it
    /// (`parent_stage`), its place among that stage's items (`item_index`)
    /// and the parent's attempt it runs for (`parent_attempt`); (parent,
    /// stage, item) is unique, so children started again after a crash are
    /// the same rows. A parent that waits for its children is `pending` with
    /// `waiting_on` > 0 — the children still to end — and the stage it waits
    /// at (`wait_stage`), and whether the first rejected child ends the wait
    /// (`wait_fail_fast`). `jobs_claim` leaves waiting jobs out, so a claim
    /// never reads them. A job submitted to run after others
    /// (`jobctl submit --after`) waits the same way, its `waiting_on` the
    /// jobs still to end, one `job_dependencies` row each.
    static let version10 = """
        ALTER TABLE jobs ADD COLUMN parent_id INTEGER;
        ALTER TABLE jobs ADD COLUMN parent_stage INTEGER;
        ALTER TABLE jobs ADD COLUMN item_index INTEGER;
        ALTER TABLE jobs ADD COLUMN parent_attempt INTEGER;
        ALTER TABLE jobs ADD COLUMN waiting_on INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE jobs ADD COLUMN wait_stage INTEGER;
        ALTER TABLE jobs ADD COLUMN wait_fail_fast INTEGER NOT NULL DEFAULT 0;
        CREATE UNIQUE INDEX jobs_children ON jobs (parent_id, parent_stage, item_index)
            WHERE parent_id IS NOT NULL;
        DROP INDEX jobs_claim;
        CREATE INDEX jobs_claim ON jobs (pool, priority DESC, run_at, id) WHERE state = 'pending' AND waiting_on = 0;

        CREATE TABLE job_dependencies (
            job_id   INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
            after_id INTEGER NOT NULL,
            any_end  INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (after_id, job_id)
        ) WITHOUT ROWID;
        CREATE INDEX job_dependencies_job ON job_dependencies (job_id);
        """
}
