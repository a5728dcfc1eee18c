/// Rate limits (migration 14 of both stores; see docs/schema.md).
///
/// `rate_starts`: one row per start (a claim) of a job of a definition with
/// `rate:`, written in the claim's transaction: its definition, its rate key
/// (`''` without `rate-key:`), the job, and the time its slot frees (the
/// claim's time plus the window). A claim takes a rated job only while fewer
/// than N rows of its definition and key free later than now; each rated
/// claim first deletes the rows already freed (`rate_starts_frees`), so the
/// table holds at most the starts of the last window.
extension Schema {
    static let version14 = """
        CREATE TABLE rate_starts (
            definition TEXT NOT NULL,
            rate_key   TEXT NOT NULL,
            job_id     INTEGER NOT NULL,
            frees_at   TEXT NOT NULL
        );
        CREATE INDEX rate_starts_key ON rate_starts (definition, rate_key, frees_at);
        CREATE INDEX rate_starts_frees ON rate_starts (frees_at);
        """
}
