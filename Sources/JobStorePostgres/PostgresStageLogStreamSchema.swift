/// Version 8: `stage_logs.stream`, as in SQLite (see `StageLogStreamSchema`
/// there and docs/schema.md). A constant default: adding it rewrites no row.
enum PostgresStageLogStreamSchema {
    static let sql = """
        ALTER TABLE {s}.stage_logs ADD COLUMN stream text NOT NULL DEFAULT 'stderr'
            CHECK (stream IN ('stderr', 'stdout'));
        """
}
