/// Version 5: `stage_logs`, as in SQLite (see `StageLogSchema` there and
/// docs/schema.md), with a `line_bytes bytea` twin for lines that are not text.
enum PostgresStageLogSchema {
    static let sql = """
        CREATE TABLE {s}.stage_logs (
            job_id        bigint NOT NULL REFERENCES {s}.jobs (id) ON DELETE CASCADE,
            job_attempt   integer NOT NULL,
            position      integer NOT NULL,
            attempt       integer NOT NULL,
            seq           integer NOT NULL,
            at            timestamptz NOT NULL,
            line          text,
            line_bytes    bytea,
            dropped_lines bigint,
            dropped_bytes bigint,
            PRIMARY KEY (job_id, job_attempt, position, attempt, seq),
            CHECK (line IS NULL OR line_bytes IS NULL)
        );
        """
}
