import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct PostgresConfigurationTests {
    static let none: [String: String] = [:]

    @Test func tcpURLWithEverything() throws {
        let configuration = try PostgresJobStoreConfiguration(
            url:
                "postgres://jobd:s3cr%40t@db.example.com:6543/jobs?sslmode=verify-full&schema=queue&application_name=web-1",
            environment: Self.none)
        #expect(configuration.endpoint == .tcp(host: "db.example.com", port: 6543))
        #expect(configuration.user == "jobd" && configuration.database == "jobs" && configuration.schema == "queue")
        #expect(configuration.sslMode == .verifyFull && configuration.applicationName == "web-1")
        #expect(configuration.password == "s3cr@t")
    }

    @Test func defaultsAndTheOtherScheme() throws {
        let configuration = try PostgresJobStoreConfiguration(
            url: "postgresql://jobd@localhost/jobs", environment: Self.none)
        #expect(configuration.endpoint == .tcp(host: "localhost", port: 5432))
        #expect(configuration.schema == "jobd" && configuration.sslMode == .prefer && !configuration.hasPassword)
        #expect(configuration.maxValueBytes == 1 << 20)
        // No database: the user's name, as libpq does.
        #expect(
            try PostgresJobStoreConfiguration(url: "postgres://jobd@[::1]:5433", environment: Self.none).database
                == "jobd")
        #expect(
            try PostgresJobStoreConfiguration(url: "postgres://jobd@[::1]:5433", environment: Self.none).endpoint
                == .tcp(host: "::1", port: 5433))
    }

    @Test(arguments: [
        "postgres://jobd@/jobs?host=/run/postgresql",
        "postgres://jobd@%2Frun%2Fpostgresql/jobs",
        "postgres://jobd@%2frun%2fpostgresql:5432/jobs",
        "postgres://jobd@/jobs",
    ])
    func unixSocketHosts(_ url: String) throws {
        let configuration = try PostgresJobStoreConfiguration(url: url, environment: Self.none)
        #expect(configuration.endpoint == .unixSocket(path: "/run/postgresql/.s.PGSQL.5432"), "\(url)")
        #expect(configuration.database == "jobs")
    }

    @Test func passwordComesFromTheURLThenPGPASSWORDThenTheCredential() throws {
        let folder = try TemporaryFolder()
        try Data("from-credential\n".utf8).write(to: URL(fileURLWithPath: folder.file("db-password")))
        let credential = ["CREDENTIALS_DIRECTORY": folder.path]
        #expect(
            try PostgresJobStoreConfiguration(url: "postgres://u@h/d", environment: credential).password
                == "from-credential")
        let both = credential.merging(["PGPASSWORD": "from-env"]) { $1 }
        #expect(try PostgresJobStoreConfiguration(url: "postgres://u@h/d", environment: both).password == "from-env")
        #expect(
            try PostgresJobStoreConfiguration(url: "postgres://u:from-url@h/d", environment: both).password
                == "from-url")
        #expect(
            try PostgresJobStoreConfiguration(
                url: "postgres://u@h/d", environment: ["CREDENTIALS_DIRECTORY": "/nonexistent"]
            ).password == nil)
    }

    @Test func thePasswordIsNeverShown() throws {
        let secret = "Tr0ub4dor-pw"
        let configuration = try PostgresJobStoreConfiguration(
            url: "postgres://jobd:\(secret)@db:5432/jobs", environment: Self.none)
        var dumped = ""
        dump(configuration, to: &dumped)
        for shown in [
            configuration.description, configuration.debugDescription, String(reflecting: configuration),
            "\(configuration)", dumped, PostgresJobStore.describe(configuration),
        ] {
            #expect(!shown.contains(secret), "\(shown)")
        }
        #expect(configuration.description == "postgres://jobd:***@db:5432/jobs?sslmode=prefer&schema=jobd")
        // Nor in the error about a bad URL that holds one.
        for bad in [
            "postgres://jobd:\(secret)@db:port/jobs", "postgres://jobd:\(secret)@db/jobs?sslmode=sometimes",
            "postgres://jobd:\(secret)@db/jobs?colour=blue", "postgres://jobd:\(secret)%zz@db/jobs",
        ] {
            let error = #expect(throws: JobStoreError.self) {
                try PostgresJobStoreConfiguration(url: bad, environment: Self.none)
            }
            #expect(error?.description.contains(secret) == false, "\(error?.description ?? "")")
        }
    }

    @Test(arguments: [
        ("mysql://jobd@db/jobs", "scheme 'mysql'"),
        ("db.example.com/jobs", "does not start with postgres://"),
        ("postgres://jobd@db:99999/jobs", "port '99999'"),
        (
            "postgres://jobd@db/jobs?sslmode=allow",
            "sslmode 'allow' is not one of disable, prefer, require, verify-full"
        ),
        ("postgres://jobd@db/jobs?schema=Jobs", "schema name 'Jobs'"),
        ("postgres://jobd@db/jobs?poolsize=3", "option 'poolsize' is unknown"),
        ("postgres://jobd@db1,db2/jobs", "several hosts"),
        ("postgres://jobd@db/jobs/extra", "is not /DATABASE"),
        ("postgres://jobd@db/jobs?sslmode", "has no value"),
        ("postgres://jobd:x@::1/jobs", "IPv6 address without brackets"),
        ("postgres://jobd@db/jobs?sslrootcert=ca.pem", "not an absolute path"),
    ])
    func badURLsSayWhatIsWrongInOneLine(_ url: String, _ expected: String) {
        let error = #expect(throws: JobStoreError.self) {
            try PostgresJobStoreConfiguration(url: url, environment: Self.none)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("\n") == false)
    }

    @Test func urlOrPath() {
        #expect(
            PostgresJobStoreConfiguration.isURL("postgres://x@y/z")
                && PostgresJobStoreConfiguration.isURL("postgresql://x@y/z"))
        #expect(!PostgresJobStoreConfiguration.isURL("../var/jobd.sqlite"))
    }

    /// Mistyped URLs are never file paths (jobd would make folders named
    /// after them, password and all); the problem never quotes them.
    @Test(arguments: [
        "postgresql:/jobd:secretPW1@127.0.0.1:54329/jobs", "postgre://jobd:secretPW1@db/jobs",
        "POSTGRES://jobd:secretPW1@db/jobs", "pg://jobd:secretPW1@db/jobs", " postgres://jobd:secretPW1@db/jobs",
        "Postgresql:jobd:secretPW1@db", "mysql://jobd:secretPW1@db/jobs",
    ])
    func mistypedURLsAreRefusedWithoutShowingThem(_ text: String) {
        let problem = PostgresURL.mistypedURLProblem(text)
        #expect(problem != nil, "\(text)")
        #expect(problem?.contains("secretPW1") == false, "\(problem ?? "")")
    }

    @Test(arguments: [
        "../var/jobd.sqlite", "/var/lib/jobd/jobd.sqlite", "postgres.sqlite", "pgdata/jobs.db", "data:2/x.sqlite",
    ])
    func pathsAreNotMistypedURLs(_ path: String) {
        #expect(PostgresURL.mistypedURLProblem(path) == nil, "\(path)")
    }

    /// The description can be pasted back as a URL: a unix socket's port and the CA file stay in it.
    @Test func theDescriptionKeepsTheSocketPortAndTheCAFile() throws {
        let socket = try PostgresJobStoreConfiguration(
            url: "postgres://jobd@/jobs?host=/tmp/pg&port=54329", environment: Self.none)
        #expect(socket.description == "postgres://jobd@/jobs?host=/tmp/pg&port=54329&schema=jobd")
        #expect(
            try PostgresJobStoreConfiguration(url: socket.description, environment: Self.none).endpoint
                == socket.endpoint)
        let standard = try PostgresJobStoreConfiguration(
            url: "postgres://jobd@/jobs?host=/tmp/pg", environment: Self.none)
        #expect(standard.description == "postgres://jobd@/jobs?host=/tmp/pg&schema=jobd")
        let verified = try PostgresJobStoreConfiguration(
            url: "postgres://jobd@db/jobs?sslmode=verify-full&sslrootcert=/etc/jobd/ca.pem", environment: Self.none)
        #expect(verified.rootCertificates == "/etc/jobd/ca.pem")
        #expect(
            verified.description
                == "postgres://jobd@db:5432/jobs?sslmode=verify-full&sslrootcert=/etc/jobd/ca.pem&schema=jobd")
    }
}
