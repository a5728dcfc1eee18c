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

    /// What `jobd --check`, jobd itself and `jobctl list` said on a database they cannot use.
    struct Refusal {
        let check: String
        let log: String
        let list: String
    }

    /// Runs the three on `harness`'s database: each exits `status` (jobctl
    /// `jobctlStatus` if given), jobctl in one line, and none shows the password.
    func refusal(
        _ harness: DaemonHarness, exit status: Int32, jobctl jobctlStatus: Int32? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Refusal {
        let check = try await runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(check.status == status, "\(check)", sourceLocation: sourceLocation)
        try harness.start()
        #expect(await harness.exitStatus() == status, "\(harness.log)", sourceLocation: sourceLocation)
        let list = try await runCommand(builtProduct("jobctl"), ["list", "--config", harness.configPath])
        #expect(list.status == jobctlStatus ?? status, "\(list)", sourceLocation: sourceLocation)
        #expect(list.error.split(separator: "\n").count == 1, "one line: \(list.error)", sourceLocation: sourceLocation)
        let refusal = Refusal(check: check.output + check.error, log: harness.log, list: list.output + list.error)
        for text in [refusal.check, refusal.log, refusal.list] {
            #expect(!text.contains(Self.password), "\(text)", sourceLocation: sourceLocation)
        }
        return refusal
    }

    @Test func aServerNobodyRunsIsExit75ForJobdCheckJobdAndJobctl() async throws {
        let port = TestPostgres.freePort()
        let harness = try harness(
            "postgres://jobd:\(Self.password)@127.0.0.1:\(port)/jobs?sslmode=disable&connect_timeout=2")
        let refused = try await refusal(harness, exit: 75)
        #expect(refused.check.contains("127.0.0.1:\(port)"), "\(refused.check)")
        #expect(refused.log.contains("127.0.0.1:\(port)"), "\(refused.log)")
    }

    @Test func aRefusedLoginIsExit77AndThePasswordIsNeverShown() async throws {
        let server = try await TestPostgres.shared()
        let user = try await server.role("refused", "LOGIN PASSWORD 'the-right-one'")
        let harness = try harness(
            "postgres://\(user):\(Self.password)@127.0.0.1:\(server.port)/jobd_test?sslmode=disable")
        let refused = try await refusal(harness, exit: 77)
        #expect(refused.log.contains("refused the login"), "\(refused.log)")
    }

    @Test func aMissingPrivilegeIsExit77WithTheGrantToRun() async throws {
        let server = try await TestPostgres.shared()
        let user = try await server.role("nocreate")
        try await server.psql("REVOKE CREATE ON DATABASE jobd_test FROM PUBLIC", database: "jobd_test")
        let harness = try harness(
            "postgres://\(user)@/jobd_test?host=\(server.folder)&port=\(server.port)&schema=\(user)")
        // jobctl never creates the schema: that it does not exist is what it says (74).
        let refused = try await refusal(harness, exit: 77, jobctl: 74)
        #expect(refused.check.contains("GRANT CREATE ON DATABASE"), "\(refused.check)")
        #expect(refused.log.contains("GRANT CREATE ON DATABASE"), "\(refused.log)")
    }

    /// A URL with a mistyped scheme is a configuration error, not a SQLite
    /// path: jobd --check and jobd refuse it, jobctl too, none shows the
    /// password, and no folder named after it is made.
    @Test(arguments: [
        "postgresql:/jobd:\(password)@127.0.0.1:5432/jobs", "POSTGRES://jobd:\(password)@db/jobs",
        "pg://jobd:\(password)@db/jobs", "\" postgres://jobd:\(password)@db/jobs\"",
    ])
    func aMistypedURLIsRefusedAndNeverShown(_ url: String) async throws {
        let harness = try harness(url)
        let check = try await runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(check.status == 1, "\(check)")
        #expect((check.output + check.error).contains("PostgreSQL URL"), "\(check)")
        try harness.start()
        #expect(await harness.exitStatus() == 78, "\(harness.log)")
        let list = try await runCommand(builtProduct("jobctl"), ["list", "--config", harness.configPath])
        #expect(list.status == 78, "\(list)")
        for text in [check.output + check.error, harness.log, list.output + list.error] {
            #expect(!text.contains(Self.password), "\(text)")
        }
        let made = try FileManager.default.contentsOfDirectory(atPath: harness.folder)
        #expect(made.allSatisfy { !$0.lowercased().hasPrefix("p") && !$0.contains(":") }, "\(made)")
    }

    @Test func aGoodDatabaseChecksRunsAndServesJobctl() async throws {
        let server = try await TestPostgres.shared()
        let harness = try harness(
            "postgres://postgres@/jobd_test?host=\(server.folder)&port=\(server.port)&schema=startup_\(getpid())")

        let check = try await runCommand(jobdPath, ["--check", "--config", harness.configPath])
        #expect(check.status == 0, "\(check)")
        #expect((check.output + check.error).contains("PostgreSQL 15"), "\(check)")

        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"), "jobd did not start: \(harness.log)")
        let submit = try await runCommand(
            builtProduct("jobctl"), ["submit", "echo", "--input", "hi", "--wait", "--config", harness.configPath])
        #expect(submit.status == 0, "\(submit)")
        #expect(submit.output == "hi", "\(submit)")
        let list = try await runCommand(builtProduct("jobctl"), ["list", "--config", harness.configPath])
        #expect(list.status == 0, "\(list)")
        #expect(list.output.contains("NODE") && list.output.contains("checker"), "\(list.output)")
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0, "\(harness.log)")
    }
}
