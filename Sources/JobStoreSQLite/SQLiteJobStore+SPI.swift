import Dispatch
internal import GRDB
import JobStore
import Locking
import Synchronization

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

    /// Same as ``queryStrings(_:)``, blocking the calling thread.
    @_spi(Maintenance)
    public func queryStringsNow(_ sql: String) throws -> [String?] {
        try pool.read { db in
            try Row.fetchAll(db, sql: sql).map { row in
                let value: DatabaseValue = row[0]
                return String.fromDatabaseValue(value)
            }
        }
    }

    /// The value of `PRAGMA name` on the writer connection (the one whose
    /// settings decide durability).
    @_spi(Maintenance)
    public func writerPragma(_ name: String) async throws -> String? {
        try await write(atomic: false) { db in try String.fetchOne(db, sql: "PRAGMA \(name)") }
    }

    /// Takes the database's write lock (`BEGIN IMMEDIATE`), calls `held`,
    /// and keeps the lock until `release` is signalled — as a long writer in
    /// another process would. Blocks this store's writer meanwhile.
    @_spi(Maintenance)
    public func holdWriteLock(held: @escaping @Sendable () -> Void, until release: DispatchSemaphore) async throws {
        try await write(atomic: false) { _ in
            held()
            release.wait()
        }
    }

    /// The SQL of every statement the writer connection runs while `body`
    /// runs, in order: for tests that hold what a write costs in statements.
    @_spi(Maintenance)
    public func writerStatements(during body: () async throws -> Void) async throws -> [String] {
        let seen = Mutex<[String]>([])
        try await write(atomic: false) { db in
            db.trace { event in
                if case let .statement(statement) = event { seen.withAnnouncedLock { $0.append(statement.sql) } }
            }
        }
        do {
            try await body()
        } catch {
            try await write(atomic: false) { db in db.trace(options: []) }
            throw error
        }
        try await write(atomic: false) { db in db.trace(options: []) }
        return seen.withAnnouncedLock { $0 }
    }

    /// How many group-commit transactions ran, and how many writes they held.
    @_spi(Maintenance)
    public var writerStatistics: (transactions: Int, writes: Int) { writer.statistics }

    /// How many times the writer's connection let go of its search-index
    /// state after indexing a large value (SearchIndexReset.swift).
    @_spi(Maintenance)
    public var searchIndexResets: Int { writer.searchIndexResets }

    /// SQLite's plan (the `detail` column of `EXPLAIN QUERY PLAN`) for the
    /// statement ``list(_:)`` runs for `query`.
    @_spi(Maintenance)
    public func listQueryPlan(_ query: JobQuery) async throws -> [String] {
        let (sql, arguments) = Self.listStatement(query)
        return try await queryPlan(sql, arguments: arguments)
    }

    /// SQLite's plan for `sql`.
    @_spi(Maintenance)
    public func queryPlan(_ sql: String) async throws -> [String] {
        try await queryPlan(sql, arguments: [])
    }

    func queryPlan(_ sql: String, arguments: [Argument]) async throws -> [String] {
        let values: [DatabaseValue] = arguments.map {
            switch $0 {
            case .int(let value): value.databaseValue
            case .text(let value): value.databaseValue
            }
        }
        return try await read(doing: "explain") { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(values)).map {
                $0["detail"]
            }
        }
    }
}
