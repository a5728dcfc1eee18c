import JobStore
internal import PostgresNIO

/// For jobd's own benchmark and tests only (`@_spi(Maintenance) import JobStore`):
/// raw SQL in the store's schema (`search_path` set to it). Not part of the store's API.
extension PostgresJobStore {
    /// Runs `sql` (statements ending their lines with `;`) in one write transaction.
    @_spi(Maintenance)
    public func executeInWriteTransaction(_ sql: String) async throws {
        try await write(atomic: false) { session in
            try await session.execute("SET LOCAL search_path TO {s}")
            for statement in PostgresMigrator.statements(sql) { try await session.execute(statement) }
        }
    }

    /// The first column of each row of the query `sql`, as text.
    @_spi(Maintenance)
    public func queryStrings(_ sql: String) async throws -> [String?] {
        try await read(doing: "query") { session in
            try await session.execute("BEGIN")
            do {
                try await session.execute("SET LOCAL search_path TO {s}")
                let values = try await session.rows("SELECT (q.first)::text FROM (\(sql)) AS q(first)") {
                    try PostgresIndexedRow($0).text(0)
                }
                try await session.execute("ROLLBACK")
                return values
            } catch {
                await session.rollBack(after: error)
                throw error
            }
        }
    }

    /// Same as ``queryStrings(_:)`` on a connection of its own, blocking the
    /// calling thread (never a Swift concurrency one: the work runs on NIO's).
    @_spi(Maintenance)
    public func queryStringsNow(_ sql: String) throws -> [String?] {
        let connection = try PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: connector.connection, id: 1,
            logger: logger
        ).wait()
        defer { _ = try? connection.close().wait() }
        let session = PostgresSession(connection: connection, schema: schema, logger: logger)
        _ = try connection.query(try session.query("SET search_path TO {s}"), logger: logger).wait()
        let query = try session.query("SELECT (q.first)::text FROM (\(sql)) AS q(first)")
        return try connection.query(query, logger: logger).wait().rows.map { try PostgresIndexedRow($0).text(0) }
    }

    /// How many group-commit transactions ran, and how many writes they held.
    @_spi(Maintenance)
    public var writerStatistics: (transactions: Int, writes: Int) { writer.statistics }

    /// Whether the LISTEN connection is up, and how many times it was made.
    @_spi(Maintenance)
    public var wakeUpStatus: (listening: Bool, connections: Int) { listener.status }
}
