import Foundation
import JobStore
package import Logging
package import PostgresNIO

/// One connection lent to a read or a write, with the store's schema: SQL
/// is written with `{s}` for the schema (`{s}.jobs`) and `$1…` for values.
package struct PostgresSession {
    let connection: PostgresConnection
    package let schema: String
    let logger: Logger
    /// Told when each statement is sent and answered: a watched connection
    /// is given up on when an answer is overdue (see `withWatchedConnection`).
    var clock: StatementClock?

    package init(connection: PostgresConnection, schema: String, logger: Logger, clock: StatementClock? = nil) {
        self.connection = connection
        self.schema = schema
        self.logger = logger
        self.clock = clock
    }

    /// `sql` with `{s}` replaced by the schema, and its values bound in order (`nil` binds NULL).
    package func query(
        _ sql: String, _ values: [(any PostgresThrowingDynamicTypeEncodable)?] = []
    ) throws -> PostgresQuery {
        var binds = PostgresBindings(capacity: values.count)
        for value in values {
            if let value { try binds.append(value) } else { binds.appendNull() }
        }
        return query(sql, binds: binds)
    }

    package func query(_ sql: String, binds: PostgresBindings) -> PostgresQuery {
        PostgresQuery(unsafeSQL: PostgresSchema.sql(sql, schema: schema), binds: binds)
    }

    /// Runs a statement to its end; returns how many rows it gave.
    @discardableResult
    package func execute(_ sql: String, _ values: (any PostgresThrowingDynamicTypeEncodable)?...) async throws -> Int {
        let query = try query(sql, values)
        return try await answered {
            var count = 0
            for try await _ in try await connection.query(query, logger: logger) { count += 1 }
            return count
        }
    }

    /// Decodes every row.
    package func rows<T>(
        _ sql: String, _ values: (any PostgresThrowingDynamicTypeEncodable)?..., decode: (PostgresRow) throws -> T
    ) async throws -> [T] {
        try await rows(query(sql, values), decode: decode)
    }

    /// Decodes every row of `query` (its SQL already in this schema).
    package func rows<T>(_ query: PostgresQuery, decode: (PostgresRow) throws -> T) async throws -> [T] {
        try await answered { try await connection.query(query, logger: logger).decode(decode) }
    }

    /// The first row, decoded; the others are read and dropped.
    package func firstRow<T>(
        _ sql: String, _ values: (any PostgresThrowingDynamicTypeEncodable)?..., decode: (PostgresRow) throws -> T
    ) async throws -> T? {
        let query = try query(sql, values)
        return try await answered {
            var first: T?
            for try await row in try await connection.query(query, logger: logger) where first == nil {
                first = try decode(row)
            }
            return first
        }
    }

    /// Runs one statement, its sending and its answer told to the clock.
    private func answered<T>(_ statement: () async throws -> T) async throws -> T {
        clock?.sent()
        defer { clock?.answered() }
        return try await statement()
    }

    /// Ends the transaction that `error` interrupted: ROLLBACK, unless the
    /// connection itself failed. Then the server has rolled it back already,
    /// and PostgresNIO 1.33.2 may never answer a query sent on a connection
    /// the server closed.
    func rollBack(after error: any Error) async {
        if connection.isClosed || Self.connectionFailed(error) { return }
        _ = try? await execute("ROLLBACK")
    }

    /// Whether `error` says the connection is gone (rather than a statement refused).
    static func connectionFailed(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            // 25P03: the server ended a session left idle inside a transaction.
            return state.hasPrefix("08") || state.hasPrefix("57P") || state == "25P03"
        default:
            return false
        }
    }

    /// Sends `NOTIFY` on the store's channel; delivered when the transaction commits.
    func notify(_ wakeUp: StoreWakeUp) async throws {
        try await execute(
            "SELECT pg_notify($1, $2)", PostgresWakeUps.channel(schema: schema), PostgresWakeUps.payload(wakeUp))
    }
}
