/// Concurrency limits (migration 9 of both stores; see docs/schema.md).
///
/// `jobs.limit_key`: the job's limit key, computed at submit from its
/// definition's `limit: { key: … }` (the input, a JSON path of it, or the
/// job's key); `''` for a job of a limited definition without a key, NULL
/// for a job of a definition without `limit:`. The claim counts the running
/// jobs of a limited definition, by key, with live leases, from
/// `jobs_running_limit` alone: a small index, of the running jobs that
/// have a key (at most the pools' sizes); jobs without one never touch it.
extension Schema {
    static let version9 = """
        ALTER TABLE jobs ADD COLUMN limit_key TEXT;
        CREATE INDEX jobs_running_limit ON jobs (definition, limit_key, lease_expires_at)
            WHERE state = 'running' AND limit_key IS NOT NULL;
        """
}
