/// Pauses (migration 11 of both stores; see docs/schema.md).
///
/// One row per paused pool, definition or schedule; `until` NULL holds
/// until resumed, a time holds until then and is ignored after it (an
/// expired row is left in place: the next pause of that name replaces it,
/// a resume removes it). The claim reads this table once per claim; it
/// has a few rows at most, none most of the time.
extension Schema {
    static let version11 = """
        CREATE TABLE pauses (
            scope      TEXT NOT NULL CHECK (scope IN ('pool', 'definition', 'schedule')),
            name       TEXT NOT NULL,
            reason     TEXT,
            actor      TEXT NOT NULL,
            created_at TEXT NOT NULL,
            until      TEXT,
            PRIMARY KEY (scope, name)
        ) WITHOUT ROWID;
        """
}
