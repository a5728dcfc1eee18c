extension PostgresSchema {
    /// Child jobs and their join, as SQLite's `Schema.version10`. The views
    /// are made anew to show the new columns (PostgreSQL expands `*` when
    /// a view is made).
    static let version10 = """
        ALTER TABLE {s}.jobs ADD COLUMN parent_id bigint;
        ALTER TABLE {s}.jobs ADD COLUMN parent_stage integer;
        ALTER TABLE {s}.jobs ADD COLUMN item_index integer;
        ALTER TABLE {s}.jobs ADD COLUMN parent_attempt integer;
        ALTER TABLE {s}.jobs ADD COLUMN waiting_on integer NOT NULL DEFAULT 0;
        ALTER TABLE {s}.jobs ADD COLUMN wait_stage integer;
        ALTER TABLE {s}.jobs ADD COLUMN wait_fail_fast boolean NOT NULL DEFAULT false;
        CREATE UNIQUE INDEX jobs_children ON {s}.jobs (parent_id, parent_stage, item_index)
            WHERE parent_id IS NOT NULL;
        DROP INDEX {s}.jobs_claim;
        CREATE INDEX jobs_claim ON {s}.jobs (pool, priority DESC, run_at, id) WHERE state = 'pending' AND waiting_on = 0;

        CREATE TABLE {s}.job_dependencies (
            job_id   bigint NOT NULL REFERENCES {s}.jobs (id) ON DELETE CASCADE,
            after_id bigint NOT NULL,
            any_end  boolean NOT NULL DEFAULT false,
            PRIMARY KEY (after_id, job_id)
        );
        CREATE INDEX job_dependencies_job ON {s}.job_dependencies (job_id);

        DROP VIEW {s}.pending_jobs;
        DROP VIEW {s}.resolved_jobs;
        CREATE VIEW {s}.pending_jobs AS
            SELECT * FROM {s}.jobs WHERE state IN ('pending', 'running');
        CREATE VIEW {s}.resolved_jobs AS
            SELECT *, round(extract(epoch FROM finished_at - started_at) * 1000)::bigint AS duration_ms
            FROM {s}.jobs WHERE state IN ('fulfilled', 'rejected', 'cancelled');
        """
}
