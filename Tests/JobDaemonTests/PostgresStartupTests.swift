import Foundation
import TestSupport
import Testing

/// jobd and jobctl on a PostgreSQL database they cannot use: one clear line,
/// the documented exit status (75: unreachable, 77: login refused or a
/// privilege missing), and never the password.
@Suite(.serialized) struct PostgresStartupTests {
    static let definitions = ["echo": "pipeline:\n  - then: echo\n    run: [cat]\n"]
    static let password = "staple-horse-wrong"

    func harness(_ url: String) throws -> DaemonHarness {
        try DaemonHarness(yaml: "node: checker", definitions: Self.definitions, database: url)
    }

    func role(_ server: TestPostgres, _ name: String, _ options: String) async throws -> String {
        let role = "\(name)_\(getpid())"
        try await server.psql("DROP ROLE IF EXISTS \(role); CREATE ROLE \(role) \(options)")
        return role
    }

    @Test func aServerNobodyRunsIsExit75ForJobdCheckJobdAndJobctl() async throws {
        let port = TestPostgres.freePort()
        let harness = try harness("postgres://jobd:\(Self.password)@127.0.0.1:\(port)/jobs?sslmode=disable&connect_timeout=2")

        let check = try await runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(check.status == 75, "\(check)")
        #expect((check.output + check.error).contains("127.0.0.1:\(port)"), "\(check)")

        try harness.start()
        #expect(await harness.exitStatus() == 75, "\(harness.log)")
        #expect(harness.log.contains("127.0.0.1:\(port)"), "\(harness.log)")

        let list = try await runCommand(builtProduct("jobctl"), ["list", "--config", harness.configPath])
        #expect(list.status == 75, "\(list)")
        #expect(list.error.split(separator: "\n").count == 1, "one line: \(list.error)")
        for text in [check.output, check.error, harness.log, list.output, list.error] {
            #expect(!text.contains(Self.password))
        }
    }

    @Test func aRefusedLoginIsExit77AndThePasswordIsNeverShown() async throws {
        let server = try await TestPostgres.shared()
        let user = try await role(server, "refused", "LOGIN PASSWORD 'the-right-one'")
        let harness = try harness("postgres://\(user):\(Self.password)@127.0.0.1:\(server.port)/jobd_test?sslmode=disable")

        let check = try await runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(check.status == 77, "\(check)")
        try harness.start()
        #expect(await harness.exitStatus() == 77, "\(harness.log)")
        #expect(harness.log.contains("refused the login"), "\(harness.log)")
        let list = try await runCommand(builtProduct("jobctl"), ["list", "--config", harness.configPath])
        #expect(list.status == 77, "\(list)")
        for text in [check.output, check.error, harness.log, list.output, list.error] {
            #expect(!text.contains(Self.password), "\(text)")
        }
    }

    @Test func aMissingPrivilegeIsExit77WithTheGrantToRun() async throws {
        let server = try await TestPostgres.shared()
        let user = try await role(server, "nocreate", "LOGIN")
        try await server.psql("REVOKE CREATE ON DATABASE jobd_test FROM PUBLIC", database: "jobd_test")
        let harness = try harness("postgres://\(user)@/jobd_test?host=\(server.folder)&port=\(server.port)&schema=\(user)")

        let check = try await runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(check.status == 77, "\(check)")
        #expect((check.output + check.error).contains("GRANT CREATE ON DATABASE"), "\(check)")
        try harness.start()
        #expect(await harness.exitStatus() == 77, "\(harness.log)")
        #expect(harness.log.contains("GRANT CREATE ON DATABASE"), "\(harness.log)")
    }

    @Test func aGoodDatabaseChecksRunsAndServesJobctl() async throws {
        let server = try await TestPostgres.shared()
        let harness = try harness("postgres://postgres@/jobd_test?host=\(server.folder)&port=\(server.port)&schema=startup_\(getpid())")

        let check = try await runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(check.status == 0, "\(check)")
        #expect((check.output + check.error).contains("PostgreSQL 15"), "\(check)")

        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"), "jobd did not start: \(harness.log)")
        let submit = try await runCommand(builtProduct("jobctl"), ["submit", "echo", "--input", "hi", "--wait", "--config", harness.configPath])
        #expect(submit.status == 0, "\(submit)")
        #expect(submit.output == "hi", "\(submit)")
        let list = try await runCommand(builtProduct("jobctl"), ["list", "--config", harness.configPath])
        #expect(list.status == 0, "\(list)")
        #expect(list.output.contains("NODE") && list.output.contains("checker"), "\(list.output)")
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0, "\(harness.log)")
    }
}
