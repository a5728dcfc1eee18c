/// Version 8 of the schema: `stage_logs.stream`, which output of the
/// stage's process a line came from — `stderr`, or `stdout` where stdout
/// does not become the stage's value (see docs/schema.md). Rows written
/// before it are stderr, as they were.
enum StageLogStreamSchema {
    static let sqlite = """
        ALTER TABLE stage_logs ADD COLUMN stream TEXT NOT NULL DEFAULT 'stderr' CHECK (stream IN ('stderr', 'stdout'));
        """
}
