/// Unique keys (migration 15; the twin of SQLite's `Schema.version15`,
/// see docs/schema.md). The trigger clears the key in the row being
/// updated (BEFORE UPDATE), so it costs no second write; its WHEN is
/// checked without calling the function, so jobs without a key pay
/// nothing more.
extension PostgresSchema {
    static let version15 = """
        ALTER TABLE {s}.jobs ADD COLUMN unique_key text,
            ADD COLUMN unique_until timestamptz,
            ADD COLUMN unique_while_running boolean NOT NULL DEFAULT false;
        CREATE UNIQUE INDEX jobs_unique ON {s}.jobs (definition, unique_key) WHERE unique_key IS NOT NULL;
        CREATE FUNCTION {s}.jobs_unique_release() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.unique_until IS NULL OR NEW.unique_until <= now() THEN NEW.unique_key := NULL; END IF; RETURN NEW; END
        $$;
        CREATE TRIGGER jobs_unique_release BEFORE UPDATE OF state ON {s}.jobs FOR EACH ROW
            WHEN (NEW.unique_key IS NOT NULL
                  AND (NEW.state IN ('fulfilled', 'rejected', 'cancelled')
                       OR (NEW.state = 'running' AND NOT NEW.unique_while_running)))
            EXECUTE FUNCTION {s}.jobs_unique_release();
        """
}
