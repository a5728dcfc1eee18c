/// Schedules fired by hand and operators' actions beyond jobs (migration
/// 13; the twin of SQLite's `Schema.version13`, see docs/schema.md).
extension PostgresSchema {
    static let version13 = """
        ALTER TABLE {s}.jobs ADD COLUMN fired_by text CHECK (fired_by IN ('manual', 'backfill'));
        ALTER TABLE {s}.pauses ADD COLUMN catch_up text CHECK (catch_up IN ('none', 'latest', 'all'));
        ALTER TABLE {s}.actions DROP CONSTRAINT actions_verb_check;
        ALTER TABLE {s}.actions ADD CONSTRAINT actions_verb_check
            CHECK (verb IN ('retry', 'cancel', 'delete', 'run', 'backfill', 'pause', 'resume'));
        ALTER TABLE {s}.actions ADD COLUMN pool text;
        """
}
