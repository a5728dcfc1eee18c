/// Concurrency limits (migration 8 of both stores; see docs/schema.md).
///
/// `jobs.limit_key`: the job's limit key, computed at submit from its
/// definition's `limit: { key: … }` (the input, a JSON path of it, or the
/// job's key); `''` for a job of a limited definition without a key, NULL
/// for a job of a definition without `limit:`. The claim counts the running
/// jobs of a limited definition, by key, through `jobs_running_limit`: a
/// small index, since running jobs are at most the pools' sizes.
extension Schema {
    static let version8 = """
        ALTER TABLE jobs ADD COLUMN limit_key TEXT;
        CREATE INDEX jobs_running_limit ON jobs (definition, limit_key) WHERE state = 'running';
        """
}
