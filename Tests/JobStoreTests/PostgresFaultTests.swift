import Foundation
import JobValues
import Locking
import Synchronization
import TestSupport
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Whatever keeps a PostgreSQL store from opening is said in one line, with a code.
@Suite struct PostgresOpenErrorTests {
    private func expectOneLine(
        _ error: JobStoreError?, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            error?.message.contains(fragment) == true, "\(error?.message ?? "no error")", sourceLocation: sourceLocation
        )
        #expect(error?.description.contains("\n") == false, sourceLocation: sourceLocation)
    }

    @Test func wrongPassword() async throws {
        let server = try await TestPostgres.shared()
        let user = try await server.role("pw", "LOGIN PASSWORD 'right-horse-battery'")
        try await server.psql("GRANT CREATE ON DATABASE jobd_test TO \(user)")
        var configuration = PostgresJobStoreConfiguration(
            endpoint: .tcp(host: "127.0.0.1", port: server.port), user: user, password: "wrong-staple-guess",
            database: "jobd_test", schema: user, sslMode: .disable)
        let error = await expectStoreError(.permissionDenied) { try await PostgresJobStore(configuration) }
        expectOneLine(error, "refused the login")
        #expect(error?.description.contains("wrong-staple-guess") == false)
        #expect(error.map { String(reflecting: $0) }?.contains("wrong-staple-guess") == false)
        configuration.setPassword(nil)
        expectOneLine(
            await expectStoreError(.permissionDenied) { try await PostgresJobStore(configuration) },
            "asks for a password")
        // The right one, with sslmode=prefer against a server without TLS: plain TCP.
        configuration.setPassword("right-horse-battery")
        configuration.sslMode = .prefer
        let created = try await PostgresJobStore.withStore(configuration) { try await $0.submit(job()).created }
        #expect(created)
    }

    @Test func unreachableServer() async throws {
        let port = TestPostgres.freePort()
        var configuration = PostgresJobStoreConfiguration(
            endpoint: .tcp(host: "127.0.0.1", port: port), user: "postgres", password: nil, database: "jobd_test",
            sslMode: .disable)
        configuration.connectTimeout = .seconds(2)
        let error = await expectStoreError(.unavailable) { try await PostgresJobStore(configuration) }
        expectOneLine(error, "127.0.0.1:\(port)")
        #expect(error?.code.isRetryable == true)
    }

    @Test func missingDatabase() async throws {
        let server = try await TestPostgres.shared()
        let configuration = PostgresJobStoreConfiguration(
            endpoint: .unixSocket(path: server.socket), user: "postgres", password: nil, database: "no_such_database")
        expectOneLine(
            await expectStoreError(.cannotOpen) { try await PostgresJobStore(configuration) }, "does not exist")
    }

    @Test func missingPrivileges() async throws {
        let server = try await TestPostgres.shared()
        let user = try await server.role("nopriv")
        try await server.psql("REVOKE CREATE ON DATABASE jobd_test FROM PUBLIC", database: "jobd_test")
        let configuration = PostgresJobStoreConfiguration(
            endpoint: .unixSocket(path: server.socket), user: user, password: nil, database: "jobd_test", schema: user)
        expectOneLine(
            await expectStoreError(.permissionDenied) { try await PostgresJobStore(configuration) }, "permission denied"
        )
    }
}

/// Schema versions on PostgreSQL: applied once however many jobds start at
/// once, and a newer jobd's schema refused.
@Suite struct PostgresMigrationTests {
    @Test func jobdsStartingAtOnceMigrateOnce() async throws {
        let configuration = try await postgresConfiguration()
        let stores = try await withThrowingTaskGroup(of: PostgresJobStore.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresJobStore(configuration) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stores.count == 4)
        let scope = StoreScope(postgres: configuration)
        let store = scope.running(stores[0])
        #expect(
            try await store.queryStrings("SELECT version FROM schema_migrations ORDER BY version")
                == (1...PostgresSchema.latestVersion).map(String.init))
    }

    @Test func aSchemaFromANewerJobdIsRefused() async throws {
        let configuration = try await postgresConfiguration()
        let later =
            PostgresSchema.migrations + [
                (
                    PostgresSchema.latestVersion + 1, "test: a note per job",
                    "ALTER TABLE {s}.jobs ADD COLUMN note text;"
                )
            ]
        _ = try await PostgresJobStore(configuration, migrations: later)
        let error = await expectStoreError(.schemaTooNew) { try await PostgresJobStore(configuration) }
        #expect(error?.message.contains("newer jobd") == true)
    }
}

/// A server the test may stop and restart, and a running store on it that
/// gives up on a call after 2 s without a connection.
private func storeOnAServerOfItsOwn() async throws -> (TestPostgres, PostgresJobStore, Task<Void, any Error>) {
    let server = try await TestPostgres.make()
    var configuration = PostgresJobStoreConfiguration(
        endpoint: .unixSocket(path: server.socket), user: "postgres", password: nil, database: "jobd_test")
    configuration.operationTimeout = .seconds(2)
    do {
        let store = try await PostgresJobStore(configuration)
        return (server, store, Task { try await store.run() })
    } catch {
        await server.stop()
        throw error
    }
}

/// PostgreSQL restarting under a running store: calls fail with a retryable
/// code while it is down, and everything works again once it is back —
/// the pool reconnects, LISTEN resumes.
@Suite(.serialized) struct PostgresRestartTests {
    @Test(.timeLimit(.minutes(3)))
    func theStoreOutlivesARestartOfTheServer() async throws {
        let (server, store, running) = try await storeOnAServerOfItsOwn()
        defer { server.stop() }
        defer { running.cancel() }
        let heard = Mutex<[StoreWakeUp]>([])
        let reader = Task { for await wakeUp in store.wakeUps() { heard.withAnnouncedLock { $0.append(wakeUp) } } }
        defer { reader.cancel() }
        try await waitUntil("LISTEN is up") { store.wakeUpStatus.listening }

        let id = try await store.submit(job(input: "in")).id
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(120)).first)
        try await store.recordStageResult(
            StageResult(lease: claimed.lease, position: 0, outcome: .fulfilled(Data("zero".utf8))))

        await server.kill()
        let result = StageResult(lease: claimed.lease, position: 1, outcome: .fulfilled(Data("one".utf8)))
        let failed = await expectStoreError(.unavailable) { try await store.recordStageResult(result) }
        #expect(failed?.code.isRetryable == true)
        #expect(failed?.message.contains("\n") == false)
        await expectStoreError(.unavailable) { try await store.job(id) }

        try await server.start()
        // The engine's way: a write that failed as unavailable is tried again.
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                try await store.recordStageResult(result)
                break
            } catch let error as JobStoreError where error.code == .unavailable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        try await waitUntil("LISTEN is back", timeout: .seconds(30)) {
            store.wakeUpStatus.listening && store.wakeUpStatus.connections >= 2
        }
        try await waitUntil("the resync is told") { heard.withAnnouncedLock { $0.contains(.resync) } }
        _ = try await store.submit(job(pool: "after"))
        try await waitUntil("a wake-up after the restart") {
            heard.withAnnouncedLock { $0.contains(.runnable(pool: "after")) }
        }

        try await store.finish(JobFinish(lease: claimed.lease, outcome: .fulfilled(Data("done".utf8))))
        let detail = try #require(try await store.job(id))
        #expect(detail.job.state == .fulfilled)
        #expect(detail.stages.map(\.value) == [Data("zero".utf8), Data("one".utf8), nil])
        await store.close()
    }
}

/// Writes in flight when the server dies: each is answered (written, or
/// failed as retryable), none hangs, and made again they all go through.
@Suite(.serialized) struct PostgresInFlightTests {
    /// PostgresNIO can leave a query sent just as the server goes away
    /// unanswered for ever; the store gives up on it (`withWatchedConnection`)
    /// and the write is made again.
    @Test(.timeLimit(.minutes(3)))
    func writesInFlightWhenTheServerDiesAreAllAnswered() async throws {
        let (server, store, running) = try await storeOnAServerOfItsOwn()
        defer { server.stop() }
        defer { running.cancel() }
        let stages = (0..<100).map { StagePlan(name: "s\($0)", kind: "then") }
        _ = try await store.submit(
            (0..<8).map { NewJob(definition: "loop", input: Data("\($0)".utf8), stages: stages) })
        let claimed = try await store.claim(pool: "default", owner: "a", limit: 8, leaseDuration: .seconds(300))
        #expect(claimed.count == 8)
        let written = WriteCount()
        let writers = Task { () async throws -> Int in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for job in claimed {
                    let lease = job.lease
                    group.addTask {
                        var failures = 0
                        for position in 0..<100 {
                            let result = StageResult(
                                lease: lease, position: position, outcome: .fulfilled(Data("v".utf8)))
                            while true {
                                do {
                                    try await store.recordStageResult(result)
                                    written.add()
                                    break
                                } catch let error as JobStoreError where error.code.isRetryable {
                                    failures += 1
                                    try await Task.sleep(for: .milliseconds(100))
                                }
                            }
                        }
                        return failures
                    }
                }
                return try await group.reduce(0, +)
            }
        }
        // The server dies with writes in flight: some made, most still to come.
        while written.value < 150 { try await Task.sleep(for: .milliseconds(5)) }
        await server.kill()
        // Down for longer than the operation timeout: writes waiting for a connection fail.
        try await Task.sleep(for: .milliseconds(2500))
        try await server.start()
        let failures = try await writers.value
        #expect(failures > 0, "some writes were in flight or queued while the server was down")
        for job in claimed {
            let detail = try #require(try await store.job(job.job.id))
            #expect(detail.stages.allSatisfy { $0.state == .fulfilled })
        }
        await store.close()
    }
}

/// How many writes went through, across the writers. (Announced to
/// ThreadSanitizer, which cannot see Mutex's futex as a lock.)
private final class WriteCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withAnnouncedLock { $0 += 1 } }
    var value: Int { count.withAnnouncedLock { $0 } }
}
