import Foundation
import JobCalendar
import JobConfig
import JobConfigStore
import JobControl
import JobDatabase
import JobStore
import JobStorePostgres
import JobStoreSQLite
import JobValues

#if canImport(Glibc)
import Glibc
#endif

/// What one jobctl command works with: its options, the console, the
/// config found as jobd finds it, the job database, and jobd's socket.
struct Session: Sendable {
    let options: GlobalOptions
    let console: Console
    let environment: [String: String]

    init(options: GlobalOptions, environment: [String: String] = Session.environment()) {
        self.options = options
        self.environment = environment
        self.console = Console.current(environment: environment)
    }

    /// The variables jobctl reads. Read one by one: building Foundation's
    /// dictionary of the whole environment costs more than a command's query.
    static func environment() -> [String: String] {
        var values: [String: String] = [:]
        // PGPASSWORD and CREDENTIALS_DIRECTORY: a PostgreSQL database's password; TZ: schedules' host zone.
        for name in [
            ConfigLocator.environmentVariable, "NO_COLOR", "TERM", "COLUMNS", "PGPASSWORD", "CREDENTIALS_DIRECTORY",
            "TZ",
        ] {
            if let value = getenv(name) { values[name] = String(cString: value) }
        }
        return values
    }

    var json: Bool { options.json }

    /// This host's zone (`$TZ`, else /etc/localtime), which schedules
    /// without `timezone:` are read in; a `TZ` that names no zone jobctl can
    /// read is noted on stderr.
    func hostZone() -> TimeZone {
        let host = HostTimeZone(environment: environment)
        if let problem = host.problem { console.note(problem) }
        return host.zone
    }

    // MARK: Config

    func locateConfig() throws(JobctlError) -> ConfigLocator.Location {
        do {
            return try ConfigLocator.locate(
                explicitPath: options.config, environment: environment,
                currentDirectory: FileManager.default.currentDirectoryPath)
        } catch {
            throw JobctlError(error)
        }
    }

    /// jobd.yaml alone: what the commands that only read and write the
    /// database need.
    func daemonConfig() throws(JobctlError) -> DaemonConfiguration {
        let location = try locateConfig()
        let result = DaemonConfiguration.load(path: location.path)
        guard let config = result.value else {
            let errors = result.diagnostics.filter { $0.severity == .error }
            throw JobctlError(
                .config,
                "the config \(location.path) has \(Self.count(errors.count, "error")); "
                    + "fix it (jobctl validate shows each)",
                details: result.diagnostics.map(\.description))
        }
        return config
    }

    /// The definitions folder of `config`: the valid definitions, and the
    /// problems of the others.
    func definitions(of config: DaemonConfiguration) -> DefinitionSet {
        DefinitionLoader(config: config).loadFolder(config.definitions)
    }

    /// What jobd with `config` claims by, to judge why pending jobs wait:
    /// its pools and the limits of its definitions.
    func waitRules(_ config: DaemonConfiguration) -> WaitRules {
        WaitRules(config: config, definitions: definitions(of: config).definitions)
    }

    /// Says on stderr that some definitions of `set` were not loaded (a
    /// file with errors contributes none), if so.
    func noteUnloaded(_ set: DefinitionSet, of config: DaemonConfiguration) {
        let errors = set.diagnostics.errorCount
        guard errors > 0 else { return }
        console.note(
            "\(Self.count(errors, "error")) in \(config.definitions): "
                + "some definitions were not loaded (jobctl validate lists them)")
    }

    static func count(_ n: Int, _ noun: String) -> String {
        n == 1 ? "1 \(noun)" : "\(n) \(noun)s"
    }

    // MARK: The database

    /// Opens the job database, runs `body`, and closes it (so that no `-wal`
    /// or `-shm` file this user made outlives the command).
    ///
    /// jobctl never creates a SQLite database: only jobd does, so that the
    /// file jobctl writes is always the one jobd has open. A missing database
    /// is an error (exit 74) that says so. A PostgreSQL database is
    /// connected to directly, so jobctl works the same from a host without a
    /// jobd; its schema is never created or upgraded by jobctl (a missing
    /// one is exit 74, as a missing SQLite file: a `schema=` typo must not
    /// make a queue no jobd reads). A statement waits at most 10 s for a
    /// lock another session holds, then the command exits 75.
    func withStore<T: Sendable>(
        _ config: DaemonConfiguration, _ body: (any JobStore) async throws -> T
    ) async throws -> T {
        let opened: OpenedStore
        do {
            opened = try await JobDatabase.open(
                config.databaseLocation, maxValueBytes: config.store.valueCap.bytes,
                applicationName: "jobctl \(config.node)", environment: environment,
                sqlite: { configuration in
                    configuration.synchronous = config.store.durability == .full ? .full : .normal
                    configuration.checkpointInterval = nil
                    configuration.connections = .single
                    configuration.createIfMissing = false
                },
                postgres: { configuration in
                    configuration.createsSchema = false
                    configuration.lockTimeout = Session.lockTimeout
                })
        } catch let error as JobStoreError
            where error.code == .permissionDenied && config.databaseLocation.sqlitePath != nil
        {
            throw JobctlError(.permissionDenied, PermissionAdvice.databaseMessage(path: config.database))
        }
        return try await opened.use(body)
    }

    /// How long a statement waits for a lock another session holds
    /// (PostgreSQL), as SQLite's busy timeout: then exit 75.
    static let lockTimeout = Duration.seconds(10)

    /// For the commands about one job: jobd.yaml, then the database.
    func withJobStore<T: Sendable>(
        job id: Int64, _ body: (DaemonConfiguration, any JobStore) async throws -> T
    ) async throws -> T {
        let config = try daemonConfig()
        return try await withStore(config) { store in try await body(config, store) }
    }

    /// The error for a job id that the database does not hold.
    static func unknownJob(_ id: Int64, _ config: DaemonConfiguration) -> JobctlError {
        JobctlError(.unknownJob, "no job \(id) (it never existed, or was pruned)")
    }

    // MARK: jobd

    enum NudgeOutcome: String, Sendable {
        case nudged
        case notRunning = "not-running"
        case unreachable
    }

    /// Tells jobd to look for work now. Never fails the command: what was
    /// written is in the database whatever jobd says. When jobd is not
    /// running, `notRunningNote` goes to stderr — unless the database is
    /// PostgreSQL: its jobds, on any host, heard of the write from the
    /// database itself (NOTIFY), and a host without a jobd is normal; when
    /// it cannot be reached, a note says why.
    @discardableResult
    func nudge(
        _ config: DaemonConfiguration, _ request: ControlRequest = ControlRequest(.nudge), notRunningNote: String
    ) -> NudgeOutcome {
        do {
            _ = try ControlClient.send(request, to: config.socket, timeout: .seconds(2))
            return .nudged
        } catch  where error.code == .notRunning {
            if !config.databaseLocation.isShared { console.note(notRunningNote) }
            return .notRunning
        } catch  where error.code == .permissionDenied {
            console.note("could not nudge jobd: " + PermissionAdvice.socketMessage(path: config.socket))
            return .unreachable
        } catch {
            console.note("could not nudge jobd: \(error.message)")
            return .unreachable
        }
    }
}
