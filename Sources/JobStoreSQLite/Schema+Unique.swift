/// Unique keys (migration 15 of both stores; see docs/schema.md).
///
/// `jobs.unique_key` is the key a job of a definition with `unique:`
/// holds now, NULL when it holds none; `jobs_unique` lets one job per
/// (definition, key) hold it. `unique_until` is submit + `period` (NULL
/// without one); `unique_while_running` says whether a running job holds
/// its key.
///
/// The trigger releases the key in the very statement that moves a job
/// out of the states that hold it — ended, or running when only pending
/// holds — unless its period still runs; so no path that ends a job can
/// forget it. A key held past its job's end by the period, or by a
/// running job whose lease has expired, is taken over by the next
/// submit of that key (`SQLiteJobStore.insert`).
extension Schema {
    static let version15 = """
        ALTER TABLE jobs ADD COLUMN unique_key TEXT;
        ALTER TABLE jobs ADD COLUMN unique_until TEXT;
        ALTER TABLE jobs ADD COLUMN unique_while_running INTEGER NOT NULL DEFAULT 0;
        CREATE UNIQUE INDEX jobs_unique ON jobs (definition, unique_key) WHERE unique_key IS NOT NULL;
        CREATE TRIGGER jobs_unique_release AFTER UPDATE OF state ON jobs
        WHEN NEW.unique_key IS NOT NULL
            AND (NEW.state IN ('fulfilled', 'rejected', 'cancelled')
                 OR (NEW.state = 'running' AND NOT NEW.unique_while_running))
            AND (NEW.unique_until IS NULL OR NEW.unique_until <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        BEGIN
            UPDATE jobs SET unique_key = NULL WHERE id = NEW.id;
        END;
        """
}
