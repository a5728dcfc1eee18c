/// Concurrency limits (migration 9; the twin of SQLite's `Schema.version9`,
/// see docs/schema.md).
extension PostgresSchema {
    static let version9 = """
        ALTER TABLE {s}.jobs ADD COLUMN limit_key text;
        CREATE INDEX jobs_running_limit ON {s}.jobs (definition, limit_key, lease_expires_at)
            WHERE state = 'running' AND limit_key IS NOT NULL;
        """
}
