/// The audit trail's tables (migration 6 of both stores; see docs/schema.md).
///
/// `actions`: one row per operator action — who (`actor`, `actor_uid`,
/// `origin`), what (`verb`, and `job_id` for one job, or the filter for a
/// selection), when (`started_at`, `finished_at`), and how many jobs it
/// matched and changed. A bulk action's progress (`last_id`, the highest
/// job id handled; `highest_id`, where it stops) is written in the same
/// transaction as each batch, so that an interrupted action is resumed
/// where it stopped. `finished_at` is NULL while it is unfinished.
/// `events.action_id` names the action behind a job's event.
extension Schema {
    static let version6 = """
        CREATE TABLE actions (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            verb          TEXT NOT NULL CHECK (verb IN ('retry', 'cancel', 'delete')),
            actor         TEXT NOT NULL,
            actor_uid     INTEGER,
            origin        TEXT NOT NULL,
            filter        TEXT NOT NULL,
            job_id        INTEGER,
            states        TEXT,
            definition    TEXT,
            key           TEXT,
            created_since TEXT,
            created_until TEXT,
            match         TEXT,
            matched       INTEGER NOT NULL,
            changed       INTEGER NOT NULL DEFAULT 0,
            last_id       INTEGER NOT NULL DEFAULT 0,
            highest_id    INTEGER NOT NULL,
            started_at    TEXT NOT NULL,
            finished_at   TEXT
        );
        CREATE INDEX actions_unfinished ON actions (verb, filter) WHERE finished_at IS NULL;
        ALTER TABLE events ADD COLUMN action_id INTEGER;
        CREATE INDEX events_action ON events (action_id) WHERE action_id IS NOT NULL;
        """
}

/// Search (migration 7): an FTS5 index of each job's input, result, error
/// and idempotency key, over `jobs` itself (external content: the text is
/// not stored twice), kept up to date by triggers on inserts, deletes and
/// updates of those columns. Claims, leases and stage writes touch none of
/// them; a job's end (its result or error) updates it once.
extension Schema {
    static let version7 = """
        CREATE VIRTUAL TABLE jobs_search USING fts5(
            input, result, error, idempotency_key, content = 'jobs', content_rowid = 'id');
        INSERT INTO jobs_search (jobs_search) VALUES ('rebuild');
        CREATE TRIGGER jobs_search_insert AFTER INSERT ON jobs BEGIN
            INSERT INTO jobs_search (rowid, input, result, error, idempotency_key)
            VALUES (new.id, new.input, new.result, new.error, new.idempotency_key);
        END;
        CREATE TRIGGER jobs_search_delete AFTER DELETE ON jobs BEGIN
            INSERT INTO jobs_search (jobs_search, rowid, input, result, error, idempotency_key)
            VALUES ('delete', old.id, old.input, old.result, old.error, old.idempotency_key);
        END;
        CREATE TRIGGER jobs_search_update AFTER UPDATE OF input, result, error, idempotency_key ON jobs BEGIN
            INSERT INTO jobs_search (jobs_search, rowid, input, result, error, idempotency_key)
            VALUES ('delete', old.id, old.input, old.result, old.error, old.idempotency_key);
            INSERT INTO jobs_search (rowid, input, result, error, idempotency_key)
            VALUES (new.id, new.input, new.result, new.error, new.idempotency_key);
        END;
        """
}
