/// Pauses (migration 11; the twin of SQLite's `Schema.version11`, see
/// docs/schema.md).
extension PostgresSchema {
    static let version11 = """
        CREATE TABLE {s}.pauses (
            scope      text NOT NULL CHECK (scope IN ('pool', 'definition', 'schedule')),
            name       text NOT NULL,
            reason     text,
            actor      text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            until      timestamptz,
            PRIMARY KEY (scope, name)
        );
        """
}
