import Foundation
import JobValues
import TestSupport
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// `sslmode=verify-full` against a server whose certificate the system
/// does not trust: a permanent misconfiguration, said as such (cannot-open,
/// not retryable, with the reason), never as "server unavailable"; and
/// `sslrootcert=` naming the CA that signed it makes it work.
@Suite(.serialized) struct PostgresTLSTests {
    @Test(.timeLimit(.minutes(3)))
    func aCertificateVerifyFullRefusesIsSaidAsSuchAndSslrootcertTrustsIt() async throws {
        let server = try await TestPostgres.make()
        defer { server.stop() }
        // A self-signed certificate for localhost only, made by the server's user in its folder.
        try TestPostgres.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost",
                "-keyout", server.data + "/server.key", "-out", server.data + "/server.crt",
            ])
        try TestPostgres.run("/bin/chmod", ["600", server.data + "/server.key"])
        try await server.psql("ALTER SYSTEM SET ssl = on")
        try await server.psql("SELECT pg_reload_conf()")
        let user = try await server.role("tls", "LOGIN SUPERUSER PASSWORD 'tls-pw'")
        // The test process may not read the server's folder (it runs as postgres when we are root).
        let ca = NSTemporaryDirectory() + "jobd-tls-ca-\(UUID().uuidString.prefix(8)).pem"
        defer { try? FileManager.default.removeItem(atPath: ca) }
        try TestPostgres.run("/bin/cp", [server.data + "/server.crt", ca], asPostgres: false)

        func configuration(host: String, ca: String?) -> PostgresJobStoreConfiguration {
            var configuration = PostgresJobStoreConfiguration(
                endpoint: .tcp(host: host, port: server.port), user: user, password: "tls-pw", database: "jobd_test",
                sslMode: .verifyFull)
            configuration.rootCertificates = ca
            configuration.connectTimeout = .seconds(10)
            return configuration
        }
        // Checked against the system's roots: refused, and said why.
        let untrusted = await expectStoreError(.cannotOpen) {
            try await PostgresJobStore.check(configuration(host: "localhost", ca: nil))
        }
        #expect(untrusted?.code.isRetryable == false)
        #expect(untrusted?.message.contains("not signed by a trusted CA") == true, "\(untrusted?.message ?? "")")
        #expect(untrusted?.message.contains("unavailable") == false, "\(untrusted?.message ?? "")")
        // Trusted, but reached by an address the certificate does not hold.
        let misnamed = await expectStoreError(.cannotOpen) {
            try await PostgresJobStore.check(configuration(host: "127.0.0.1", ca: ca))
        }
        #expect(misnamed?.message.contains("does not name that host") == true, "\(misnamed?.message ?? "")")
        // Trusted through sslrootcert=, by the name it holds: in.
        let report = try await PostgresJobStore.check(configuration(host: "localhost", ca: ca))
        #expect(report.serverVersion.hasPrefix("15"))
        // A CA file that is not there is a clear error too.
        let missing = await expectStoreError(.cannotOpen) {
            try await PostgresJobStore.check(configuration(host: "127.0.0.1", ca: ca + ".missing"))
        }
        #expect(missing?.message.contains("sslrootcert") == true, "\(missing?.message ?? "")")
    }
}
