import Foundation
import JobStore
import JobStorePostgres
import JobStoreSQLite
import JobValues

/// The job database a ``DatabaseLocation`` names, opened: jobd, jobctl and
/// the tests open every store through ``open(_:maxValueBytes:applicationName:environment:sqlite:postgres:)``.
public enum JobDatabase {
    /// Opens the store at `location`.
    ///
    /// A SQLite database gets a ``SQLiteJobStoreConfiguration`` for its path
    /// and `maxValueBytes`; a PostgreSQL one a ``PostgresJobStoreConfiguration``
    /// from ``postgresConfiguration(url:maxValueBytes:applicationName:environment:)``.
    /// `sqlite` or `postgres` then adjusts it (and may do what must come
    /// first: make the SQLite file's folder, check the PostgreSQL server)
    /// before the store is opened with it. Errors are ``JobStoreError``s,
    /// but for those the closures throw.
    public static func open(
        _ location: DatabaseLocation, maxValueBytes: Int, applicationName: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        sqlite: (inout SQLiteJobStoreConfiguration) throws -> Void = { _ in },
        postgres: (inout PostgresJobStoreConfiguration) async throws -> Void = { _ in }
    ) async throws -> OpenedStore {
        switch location {
        case let .sqlite(path):
            var configuration = SQLiteJobStoreConfiguration(path: path, maxValueBytes: maxValueBytes)
            try sqlite(&configuration)
            return .sqlite(try SQLiteJobStore(configuration))
        case let .postgres(url):
            var configuration = try postgresConfiguration(
                url: url, maxValueBytes: maxValueBytes, applicationName: applicationName, environment: environment)
            try await postgres(&configuration)
            return .postgres(try await PostgresJobStore(configuration))
        }
    }

    /// The PostgreSQL store's settings for `url`, with the password from
    /// it, `$PGPASSWORD` or `$CREDENTIALS_DIRECTORY/db-password` in
    /// `environment`; `applicationName` unless the URL gives one. Throws an
    /// `invalid-argument` error of one line for a bad URL,
    /// `permission-denied` for an unreadable credential file.
    public static func postgresConfiguration(
        url: String, maxValueBytes: Int, applicationName: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PostgresJobStoreConfiguration {
        var configuration = try PostgresJobStoreConfiguration(url: url, environment: environment)
        configuration.maxValueBytes = maxValueBytes
        if !url.contains("application_name=") { configuration.applicationName = applicationName }
        return configuration
    }
}

/// A job database, opened: the store, and what only one kind of database has.
public enum OpenedStore: Sendable {
    case sqlite(SQLiteJobStore)
    case postgres(PostgresJobStore)

    /// The store, whichever the database.
    public var store: any JobStore {
        switch self {
        case let .sqlite(store): store
        case let .postgres(store): store
        }
    }

    public var sqlite: SQLiteJobStore? {
        if case let .sqlite(store) = self { return store }
        return nil
    }

    /// The PostgreSQL store, whose `run()` (a `Service`) must be running
    /// while it is used; nil for SQLite.
    public var postgres: PostgresJobStore? {
        if case let .postgres(store) = self { return store }
        return nil
    }

    /// Writes what is queued and closes the database (for PostgreSQL, once
    /// its service stopped).
    public func close() async throws {
        switch self {
        case let .sqlite(store): try await store.close()
        case let .postgres(store): await store.close()
        }
    }

    /// Runs `body` with the store — a PostgreSQL store's service running
    /// meanwhile — then closes it, whether `body` threw or not: for a
    /// short-lived command. An error closing a SQLite file is thrown only
    /// when `body` succeeded.
    public func use<T: Sendable>(_ body: (any JobStore) async throws -> T) async throws -> T {
        switch self {
        case let .sqlite(store):
            do {
                let value = try await body(store)
                try await store.close()
                return value
            } catch {
                try? await store.close()
                throw error
            }
        case let .postgres(store):
            return try await store.running { try await body($0) }
        }
    }
}
