import Foundation
import JobConfig
import JobConfigStore
import JobControl
import JobStore
import JobStoreSQLite
import Spawn
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A folder with a jobd.yaml and a jobs.d, and the real `jobd` binary run
/// on it as a child process (stderr into a file), with a fake systemd
/// notification socket.
final class DaemonHarness: @unchecked Sendable {
    // @unchecked Sendable: `process` is only touched by the test that owns
    // the harness, one call at a time.
    let folder: String
    let notify: NotifyListener
    private(set) var process: SpawnedProcess?
    private(set) var starts = 0
    /// Where jobd runs, if not in the test's own network namespace.
    var namespace: NetworkNamespace?
    /// Added to the environment of every start.
    var environment: [String: String] = [:]

    /// `database`: another harness's `databasePath`, for two jobds on one database.
    init(yaml: String = "", definitions: [String: String], database: String = "state/jobd.sqlite") throws {
        folder = NSTemporaryDirectory() + "jobd-daemon-tests-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder + "/jobs.d", withIntermediateDirectories: true)
        // These defaults give way to the same keys in `yaml`.
        let defaults = [("log", "{ level: debug }"), ("shutdown-grace", "10s"), ("kill-grace", "1s")]
            .filter { key, _ in !yaml.split(separator: "\n").contains { $0.hasPrefix(key + ":") } }
            .map { "\($0): \($1)" }.joined(separator: "\n")
        let config = """
            database: \(database)
            definitions: jobs.d
            socket: state/jobd.sock
            \(defaults)
            \(yaml)
            """
        notify = try NotifyListener(path: folder + "/notify.sock")
        try write(config, to: "jobd.yaml")
        for (name, text) in definitions { try write(text, to: "jobs.d/\(name).yaml") }
    }

    deinit {
        if let process, process.isRunning {
            process.signal(SIGKILL)
            process.wait()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    var configPath: String { folder + "/jobd.yaml" }
    var databasePath: String { folder + "/state/jobd.sqlite" }
    var socketPath: String { folder + "/state/jobd.sock" }
    var logPath: String { folder + "/jobd-\(starts).log" }

    func write(_ text: String, to name: String) throws {
        try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
    }

    /// Starts jobd; `environment` adds to (or, with "", removes from) the test's own.
    func start(environment extra: [String: String] = [:], arguments: [String] = []) throws {
        starts += 1
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        for name in ["WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "JOBD_CONFIG"] { environment[name] = nil }
        for (key, value) in self.environment.merging(extra, uniquingKeysWith: { $1 }) {
            environment[key] = value.isEmpty ? nil : value
        }
        let argv = [jobdPath, "--config", configPath] + arguments
        let command = namespace?.command(argv) ?? argv
        process = try SpawnedProcess(
            command[0], Array(command.dropFirst()), environment: environment, stdout: .null, stderr: .file(logPath))
    }

    var pid: Int32 { process?.pid ?? 0 }

    func signal(_ number: Int32) { process?.signal(number) }

    /// Waits for jobd to exit; nil if it is still running after `limit`.
    func exitStatus(within limit: Duration = .seconds(30)) async -> Int32? {
        await process?.waitForExit(within: limit)?.status
    }

    /// Everything jobd wrote to stderr in its latest run.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until the latest run's log holds `text`.
    func waitForLog(_ text: String, within limit: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !log.contains(text) {
            if ContinuousClock.now > deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    // MARK: Jobs, as jobctl would submit them

    func openStore() throws -> SQLiteJobStore {
        try SQLiteJobStore(SQLiteJobStoreConfiguration(path: databasePath, checkpointInterval: nil))
    }

    func definition(_ name: String) throws -> JobDefinition {
        let text = try String(contentsOfFile: folder + "/jobs.d/\(name).yaml", encoding: .utf8)
        return try DefinitionLoader().parse(yaml: text, path: folder + "/jobs.d/\(name).yaml").get()
    }

    @discardableResult
    func submit(_ name: String, input: String = "", to store: SQLiteJobStore, nudge: Bool = true) async throws -> Int64
    {
        let id = try await store.submit(try definition(name).newJob(input: Data(input.utf8))).id
        if nudge { _ = try? ControlClient.send(ControlRequest(.nudge), to: socketPath) }
        return id
    }

    func resolved(
        _ id: Int64, in store: SQLiteJobStore, within limit: Duration = .seconds(30)
    ) async throws -> JobDetail {
        let deadline = ContinuousClock.now + limit
        while true {
            let detail = try #require(try await store.job(id))
            if detail.job.state.isResolved || ContinuousClock.now > deadline { return detail }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func read(_ name: String) -> String {
        (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? ""
    }
}

/// The `jobd` executable, built beside the test bundle.
var jobdPath: String { builtProduct("jobd") }
