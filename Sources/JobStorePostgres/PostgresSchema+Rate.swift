/// Rate limits (migration 14; the twin of SQLite's `Schema.version14`, see
/// docs/schema.md).
extension PostgresSchema {
    static let version14 = """
        CREATE TABLE {s}.rate_starts (
            definition text NOT NULL,
            rate_key   text NOT NULL,
            job_id     bigint NOT NULL,
            frees_at   timestamptz NOT NULL
        );
        CREATE INDEX rate_starts_key ON {s}.rate_starts (definition, rate_key, frees_at);
        CREATE INDEX rate_starts_frees ON {s}.rate_starts (frees_at);
        """
}
