/// A bulk action's `--parent` (migration 11; the twin of SQLite's
/// `Schema.version11`, see docs/schema.md).
extension PostgresSchema {
    static let version11 = """
        ALTER TABLE {s}.actions ADD COLUMN parent_id bigint;
        """
}
