/// A bulk action's `--parent` (migration 12; the twin of SQLite's
/// `Schema.version12`, see docs/schema.md).
extension PostgresSchema {
    static let version12 = """
        ALTER TABLE {s}.actions ADD COLUMN parent_id bigint;
        """
}
