import Foundation
import Glibc
import Spawn
import Synchronization
import Testing

/// A throwaway PostgreSQL server from Debian's package: `initdb` in a
/// temporary folder, listening on a unix socket in that folder and on a
/// free port of 127.0.0.1, stopped and removed when the test process ends
/// (or, should it crash, by a watchdog that outlives it by a second).
///
/// The server refuses to run as root: as root, it runs as the `postgres`
/// system user (made by the postgresql package), in a folder it owns.
/// Local connections are trusted; TCP ones ask for a password (scram).
public final class TestPostgres: Sendable {
    public static let bin = "/usr/lib/postgresql/15/bin"

    /// The server the suites share, started by the first test that asks.
    private static let sharedServer: Result<TestPostgres, TestPostgresError> = {
        do throws(TestPostgresError) { return .success(try TestPostgres()) } catch { return .failure(error) }
    }()

    /// The shared server, from an async test: the first call starts it on
    /// a thread of its own. Every call below that blocks (initdb, pg_ctl,
    /// psql) has such an async twin: blocking one of the cooperative pool's
    /// few threads for seconds stalls every test running beside it.
    public static func shared() async throws -> TestPostgres {
        try await onOwnThread { try sharedServer.get() }
    }

    /// A server of the test's own (one it stops, kills or restarts).
    public static func make() async throws -> TestPostgres {
        try await onOwnThread { try TestPostgres() }
    }

    public func start() async throws {
        try await onOwnThread { try self.start() }
    }

    public func kill() async {
        await onOwnThread { self.kill() }
    }

    public func stop() async {
        await onOwnThread { self.stop() }
    }

    public func psql(_ sql: String, database: String = "postgres") async throws {
        try await onOwnThread { try self.psql(sql, database: database) }
    }

    /// A role of this test process named after `name` (made again if it
    /// exists), with `options` (`LOGIN PASSWORD '…'`); gives its name.
    public func role(_ name: String, _ options: String = "LOGIN") async throws -> String {
        let role = "\(name)_\(getpid())"
        try await psql("DROP ROLE IF EXISTS \(role); CREATE ROLE \(role) \(options)")
        return role
    }

    public let folder: String
    public let port: Int
    private let serverPID = Mutex<pid_t>(0)

    public var data: String { folder + "/data" }
    /// The socket file, for `PostgresJobStoreConfiguration.Endpoint.unixSocket`.
    public var socket: String { folder + "/.s.PGSQL.\(port)" }

    /// The network namespace the server runs in, if not the test's own;
    /// there it listens on every address it has (hosts in namespaces of
    /// their own reach it over veth links), here on 127.0.0.1 only.
    public let namespace: String?

    /// A server of the test's own, run in network namespace `namespace`,
    /// that takes TCP connections from `network` (a CIDR; with a password)
    /// on every address it has there. Its unix socket works from anywhere.
    public static func make(in namespace: String, allowing network: String) async throws -> TestPostgres {
        try await onOwnThread { try TestPostgres(allowing: network, namespace: namespace) }
    }

    public convenience init() throws(TestPostgresError) {
        try self.init(allowing: nil, namespace: nil)
    }

    init(allowing network: String?, namespace: String?) throws(TestPostgresError) {
        self.namespace = namespace
        guard FileManager.default.isExecutableFile(atPath: Self.bin + "/initdb") else {
            throw TestPostgresError(
                "PostgreSQL 15 is not installed (no \(Self.bin)/initdb): run `make test`, whose scripts/test-deps "
                    + "installs Debian's postgresql package")
        }
        var template = Array((NSTemporaryDirectory() + "jobd-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TestPostgresError("cannot make a temporary folder") }
        folder = String(cString: made)
        port = Self.freePort()
        do {
            if geteuid() == 0 {
                chmod(folder, 0o755)
                try Self.run("/bin/chown", ["postgres:postgres", folder], asPostgres: false)
            }
            try Self.run(
                Self.bin + "/initdb",
                ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"])
            let hba = """
                local all all trust
                host all all 127.0.0.1/32 scram-sha-256
                \(network.map { "host all all \($0) scram-sha-256" } ?? "")

                """
            try Self.run("/bin/sh", ["-c", "cat > \(data)/pg_hba.conf <<'EOF'\n\(hba)EOF"])
            try start()
            try psql("CREATE DATABASE jobd_test ENCODING 'UTF8'")
        } catch {
            stop()
            throw error
        }
        Self.watch(data: data, folder: folder)
        if Self.registered.withLock({ registered in
            defer { registered = true }
            return !registered
        }) {
            atexit { if case .success(let server) = TestPostgres.sharedServer { server.stop() } }
        }
    }

    private static let registered = Mutex(false)

    /// Starts (or starts again) the server; returns once it takes connections.
    /// No fsync (a test machine does not lose power), but commits are
    /// written to the WAL before they are acknowledged, so a server stopped
    /// at once (`kill()`) keeps every acknowledged write.
    public func start() throws(TestPostgresError) {
        let listen = namespace == nil ? "127.0.0.1" : "*"
        let options =
            "-k \(folder) -p \(port) -c listen_addresses='\(listen)' -c max_connections=300 "
            + "-c fsync=off -c full_page_writes=off -c shared_buffers=64MB"
        try Self.run(
            Self.bin + "/pg_ctl", ["-D", data, "-l", folder + "/server.log", "-w", "-t", "60", "-o", options, "start"],
            inNamespace: namespace)
        let pidText =
            (try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8))?
            .split(separator: "\n").first.map(String.init) ?? ""
        serverPID.withLock { $0 = pid_t(pidText) ?? 0 }
    }

    /// Stops the server at once (as a crash or `systemctl restart` would); keeps its files.
    public func kill() {
        let pid = serverPID.withLock { $0 }
        guard pid > 0 else { return }
        _ = try? Self.run(Self.bin + "/pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
    }

    /// Stops the server as `pg_ctl stop` does by default (fast: every
    /// session is told 57P01 and ended); keeps its files.
    public func shutDown() async {
        await onOwnThread {
            guard self.serverPID.withLock({ $0 }) > 0 else { return }
            _ = try? Self.run(Self.bin + "/pg_ctl", ["-D", self.data, "-m", "fast", "-w", "stop"])
        }
    }

    /// Stops the server and removes its folder.
    public func stop() {
        kill()
        serverPID.withLock { $0 = 0 }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs SQL as the superuser, in `database`.
    /// One statement at a time across the tests: PostgreSQL refuses two
    /// GRANTs or REVOKEs on one database at once ("tuple concurrently updated").
    public func psql(_ sql: String, database: String = "postgres") throws(TestPostgresError) {
        try Self.psqlTurn.withLock { _ throws(TestPostgresError) in
            try psqlNow(sql, database: database)
        }
    }

    private static let psqlTurn = Mutex(())

    /// A psql session (its `application_name` is `name`) that runs `sql` in
    /// a transaction, then sleeps in it, keeping the locks `sql` took, as an
    /// operator's session left open would; ``releaseLocks(of:)`` ends it.
    public func holdLocks(_ sql: String, name: String, database: String = "jobd_test") throws -> SpawnedProcess {
        let argv = [
            "/usr/bin/psql", "-X", "-q", "-h", folder, "-p", "\(port)", "-U", "postgres", "-d", database,
            "-c", "BEGIN; \(sql); SELECT pg_sleep(3600); ROLLBACK",
        ]
        let command =
            geteuid() == 0
            ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] + argv : argv
        var environment = ProcessInfo.processInfo.environment
        environment["PGAPPNAME"] = name
        do {
            return try SpawnedProcess(
                command[0], Array(command.dropFirst()), environment: environment, stdout: .null, stderr: .null)
        } catch {
            throw TestPostgresError("cannot run psql: \(error)")
        }
    }

    /// Ends the sessions ``holdLocks(_:name:database:)`` started as `name`: their locks go.
    public func releaseLocks(of name: String) async throws {
        try await psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)'")
    }

    private func psqlNow(_ sql: String, database: String) throws(TestPostgresError) {
        try Self.run(
            "/usr/bin/psql",
            [
                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", folder, "-p", "\(port)", "-U", "postgres",
                "-d", database, "-c", sql,
            ])
    }

    /// A port nobody listens on now.
    public static func freePort() -> Int {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                _ = bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a command to its end (as `postgres` when we are root); throws with its output if it fails.
    ///
    /// Only the command is waited for, not the end of its output: the server
    /// `pg_ctl start` leaves running keeps its stdout. So output goes to a file.
    public static func run(
        _ executable: String, _ arguments: [String], asPostgres: Bool = true, inNamespace namespace: String? = nil
    ) throws(TestPostgresError) {
        let command =
            (asPostgres && geteuid() == 0)
            ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", executable] + arguments
            : [executable] + arguments
        let argv = namespace.map { [NetworkNamespace.ip, "netns", "exec", $0] + command } ?? command
        let log = NSTemporaryDirectory() + "jobd-pg-command-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let termination: SpawnedProcess.Termination
        do {
            termination = try SpawnedProcess(
                argv[0], Array(argv.dropFirst()), stdout: .file(log), stderr: .sameAsStdout
            )
            .wait()
        } catch {
            throw TestPostgresError("cannot run \(executable): \(error)")
        }
        guard termination == .exited(0) else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw TestPostgresError(
                "\(executable) \(arguments.joined(separator: " ")) failed (\(termination)): \(output)")
        }
    }

    /// Should this process die without its atexit handlers, the server is
    /// killed and its folder removed within a second.
    private static func watch(data: String, folder: String) {
        let asPostgres = geteuid() == 0 ? "/usr/bin/setpriv --reuid=postgres --regid=postgres --init-groups " : ""
        _ = try? SpawnedProcess(
            "/bin/sh",
            [
                "-c",
                """
                while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
                [ -d '\(data)' ] && \(asPostgres)\(bin)/pg_ctl -D '\(data)' -m immediate -w stop >/dev/null 2>&1
                rm -rf '\(folder)'
                """,
            ], lifetime: .outlivesOwner)
    }
}

public struct TestPostgresError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
