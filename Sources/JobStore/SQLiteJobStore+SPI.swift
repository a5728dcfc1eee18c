import GRDB

/// For jobd's own benchmark and tests only (`@_spi(Maintenance) import JobStore`):
/// raw SQL through the group-commit writer, and raw reads. Not part of the
/// store's API.
extension SQLiteJobStore {
    /// Runs `sql` (several statements allowed) in one write transaction.
    @_spi(Maintenance)
    public func executeInWriteTransaction(_ sql: String) async throws {
        try await write(atomic: true) { db in try db.execute(sql: sql) }
    }

    /// The first column of each row of `sql`, as text.
    @_spi(Maintenance)
    public func queryStrings(_ sql: String) async throws -> [String?] {
        try await read(doing: "query") { db in
            try Row.fetchAll(db, sql: sql).map { row in
                let value: DatabaseValue = row[0]
                return String.fromDatabaseValue(value) ?? (value.isNull ? nil : "\(value)")
            }
        }
    }
}
