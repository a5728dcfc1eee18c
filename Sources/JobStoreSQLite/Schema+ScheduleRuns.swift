/// Schedules fired by hand and operators' actions beyond jobs (migration 13
/// of both stores; see docs/schema.md).
///
/// `pauses.catch_up`: the catch-up a resume of a schedule asked for (NULL:
/// the schedule's own); a resumed schedule's pause is kept, ended (`until`
/// the resume's time), so that every jobd applies it to what the pause
/// made the schedule miss.
/// `jobs.fired_by`: how a scheduled job the calendar did not fire on time
/// came to be — `manual` (`jobctl schedules run`, the dashboard's "run
/// now") or `backfill` — NULL for every other job. `actions.verb` gains
/// `run`, `backfill`, `pause` and `resume`, and `actions.pool` keeps a
/// selection's pool (`jobctl pause pool P --cancel-running` cancels the
/// pool's running jobs). SQLite cannot change a column's check in place, so
/// `actions` is rebuilt with its rows, ids and AUTOINCREMENT counter.
extension Schema {
    static let version13 = """
        ALTER TABLE jobs ADD COLUMN fired_by TEXT CHECK (fired_by IN ('manual', 'backfill'));
        ALTER TABLE pauses ADD COLUMN catch_up TEXT CHECK (catch_up IN ('none', 'latest', 'all'));
        CREATE TABLE actions_rebuilt (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            verb          TEXT NOT NULL
                          CHECK (verb IN ('retry', 'cancel', 'delete', 'run', 'backfill', 'pause', 'resume')),
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
            finished_at   TEXT,
            parent_id     INTEGER,
            pool          TEXT
        );
        INSERT INTO actions_rebuilt (id, verb, actor, actor_uid, origin, filter, job_id, states, definition, key,
                                     created_since, created_until, match, matched, changed, last_id, highest_id,
                                     started_at, finished_at, parent_id)
        SELECT id, verb, actor, actor_uid, origin, filter, job_id, states, definition, key, created_since,
               created_until, match, matched, changed, last_id, highest_id, started_at, finished_at, parent_id
        FROM actions;
        DELETE FROM sqlite_sequence WHERE name = 'actions_rebuilt';
        UPDATE sqlite_sequence SET name = 'actions_rebuilt' WHERE name = 'actions';
        DROP TABLE actions;
        ALTER TABLE actions_rebuilt RENAME TO actions;
        CREATE INDEX actions_unfinished ON actions (verb, filter) WHERE finished_at IS NULL;
        """
}
