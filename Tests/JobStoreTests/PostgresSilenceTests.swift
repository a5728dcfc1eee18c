import Foundation
import JobValues
import TestSupport
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// A network path that stops passing data without closing the connection
/// (a NAT or proxy that lost its state): a call on such a connection fails
/// once its statement is overdue, that connection is closed, and the next
/// call gets a new one. Without the bound, the call waited for ever.
@Suite(.serialized) struct PostgresSilenceTests {
    @Test(.timeLimit(.minutes(3)))
    func aConnectionThatGoesSilentIsGivenUpAndReplaced() async throws {
        let server = try await TestPostgres.shared()
        let password = "silent-\(UInt32.random(in: 0...UInt32.max))"
        let user = try await server.role("silent", "LOGIN SUPERUSER PASSWORD '\(password)'")
        let proxy = try FreezingProxy.start(to: server.port)
        defer { proxy.stop() }
        let schema = try await postgresConfiguration().schema
        var configuration = PostgresJobStoreConfiguration(
            endpoint: .tcp(host: "127.0.0.1", port: proxy.port), user: user, password: password, database: "jobd_test",
            schema: schema, sslMode: .disable)
        configuration.statementTimeout = .seconds(2)
        let scope = StoreScope(postgres: configuration)
        let store = scope.running(try await PostgresJobStore(configuration))
        try await waitUntil("LISTEN is up", timeout: .seconds(30)) { store.wakeUpStatus.listening }
        let id = try await store.submit(job(input: "before")).id
        #expect(try await store.job(id)?.job.input == Data("before".utf8))

        proxy.freeze()
        // The pooled connection that served the calls above is silent now.
        let failed = await expectStoreError(.unavailable) {
            try await answered(within: .seconds(90), "a call on the silent connection") { try await store.job(id) }
        }
        #expect(failed?.message.contains("sent no answer") == true, "\(failed?.message ?? "")")
        #expect(failed?.code.isRetryable == true)
        // Made again, the call gets a new connection.
        let deadline = ContinuousClock.now + .seconds(60)
        var again: JobDetail?
        while again == nil && ContinuousClock.now < deadline {
            again = try? await store.job(id)
        }
        #expect(again?.job.input == Data("before".utf8))
        _ = try await store.submit(job(input: "after"))
        // The LISTEN connection went silent too: its ping finds out, and it is made again.
        try await waitUntil("LISTEN is made again", timeout: .seconds(90)) { store.wakeUpStatus.connections >= 2 }
        await store.close()
    }
}
