import Foundation
import JobDatabase
import JobValues
import Synchronization
import TestSupport
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// The stores the conformance tests run against: every test written once,
/// with `@Test(arguments: StoreKind.allCases)`.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// What the tests need of a store beyond the protocol: raw SQL (the same
/// text works on both: tables are looked up in the store's schema).
protocol StoreUnderTest: JobStore {
    func queryStrings(_ sql: String) async throws -> [String?]
    /// The same, blocking: for a completion handler, which must not wait on tasks.
    func queryStringsNow(_ sql: String) throws -> [String?]
    func executeInWriteTransaction(_ sql: String) async throws
    func close() async throws
}

extension SQLiteJobStore: StoreUnderTest {}
extension PostgresJobStore: StoreUnderTest {}

extension StoreUnderTest {
    func scalar(_ sql: String) async throws -> String? {
        try await queryStrings(sql).first ?? nil
    }

    func count(_ sql: String) async throws -> Int {
        Int(try await scalar(sql) ?? "0") ?? -1
    }
}

/// Keeps a test's store alive: its folder (SQLite) or the task running it
/// (PostgreSQL); ends them when the test drops it.
final class StoreScope: Sendable {
    let kind: StoreKind
    let folder: TemporaryFolder?
    let postgres: PostgresJobStoreConfiguration?
    private let runs = Mutex<[Task<Void, Never>]>([])

    init(sqlite folder: TemporaryFolder) {
        kind = .sqlite
        self.folder = folder
        postgres = nil
    }

    init(postgres configuration: PostgresJobStoreConfiguration) {
        kind = .postgres
        folder = nil
        postgres = configuration
    }

    /// Another store on the same database, as another process would open.
    func openAnother() async throws -> any StoreUnderTest {
        switch kind {
        case .sqlite: return try SQLiteJobStore(path: folder!.file("jobs.sqlite"))
        case .postgres: return try await running(PostgresJobStore(postgres!))
        }
    }

    /// Starts `store.run()` for as long as this scope lives.
    func running(_ store: PostgresJobStore) -> PostgresJobStore {
        let task = Task { _ = try? await store.run() }
        runs.withLock { $0.append(task) }
        return store
    }

    deinit {
        for task in runs.withLock({ $0 }) { task.cancel() }
    }
}

private let schemaCounter = Mutex(0)

/// A configuration for a schema of its own in the shared test server's database.
func postgresConfiguration(maxValueBytes: Int = 1 << 20) async throws -> PostgresJobStoreConfiguration {
    let server = try await TestPostgres.shared()
    let number = schemaCounter.withLock {
        $0 += 1
        return $0
    }
    var configuration = PostgresJobStoreConfiguration(
        endpoint: .unixSocket(path: server.socket), user: "postgres", password: nil, database: "jobd_test",
        schema: "t\(getpid())_\(number)")
    configuration.maxValueBytes = maxValueBytes
    configuration.maxConnections = 4
    return configuration
}

/// A fresh store of `kind`, opened as jobd and jobctl open theirs
/// (`JobDatabase.open`); keep the scope as long as the store.
func makeStore(_ kind: StoreKind, maxValueBytes: Int = 1 << 20) async throws -> (any StoreUnderTest, StoreScope) {
    switch kind {
    case .sqlite:
        let folder = try TemporaryFolder()
        let opened = try await JobDatabase.open(
            .sqlite(path: folder.file("jobs.sqlite")), maxValueBytes: maxValueBytes, applicationName: "jobd")
        guard case let .sqlite(store) = opened else { throw TestFailure("not a SQLite store") }
        return (store, StoreScope(sqlite: folder))
    case .postgres:
        let configuration = try await postgresConfiguration(maxValueBytes: maxValueBytes)
        let opened = try await JobDatabase.open(
            .postgres(url: configuration.description), maxValueBytes: maxValueBytes, applicationName: "jobd",
            environment: [:], postgres: { $0.maxConnections = configuration.maxConnections })
        guard case let .postgres(store) = opened else { throw TestFailure("not a PostgreSQL store") }
        let scope = StoreScope(postgres: configuration)
        return (scope.running(store), scope)
    }
}
