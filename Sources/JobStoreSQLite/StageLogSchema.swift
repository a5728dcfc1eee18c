/// Version 5 of the schema: `stage_logs`, the stderr lines of each stage
/// attempt (see docs/schema.md). One row per line, numbered from 0 within
/// the attempt (`seq`); when an attempt wrote more than its cap, the lines
/// between the head and the tail are gone and one row at the first missing
/// number (`dropped_lines`, `dropped_bytes` set, `line` NULL) says how many.
/// A line is kept as written: TEXT (or `line text`) when it is valid UTF-8
/// without NUL, else a BLOB (`line_bytes bytea`), as values are.
/// Rows go with their job (ON DELETE CASCADE), so pruning keeps logs as
/// long as the job.
enum StageLogSchema {
    static let sqlite = """
        CREATE TABLE stage_logs (
            job_id        INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
            job_attempt   INTEGER NOT NULL,
            position      INTEGER NOT NULL,
            attempt       INTEGER NOT NULL,
            seq           INTEGER NOT NULL,
            at            TEXT NOT NULL,
            line,
            dropped_lines INTEGER,
            dropped_bytes INTEGER,
            PRIMARY KEY (job_id, job_attempt, position, attempt, seq)
        ) WITHOUT ROWID;
        """
}
