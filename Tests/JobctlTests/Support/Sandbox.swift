import Foundation
import JobConfig
import JobControl
import JobStore
import JobStoreSQLite
import Testing

let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
}()

/// The jobctl binary built beside the test bundle.
let jobctlPath: String = {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [bundle, bundle.deletingLastPathComponent()] {
        let path = candidate.appendingPathComponent("jobctl").path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return repositoryRoot + "/.build/debug/jobctl"
}()

/// Job definitions the tests submit.
enum TestDefinitions {
    /// Greets its input: `world` → `HELLO, WORLD!`.
    static let hello = """
        description: greets its input
        pipeline:
          - then: greet
            run: [sed, -e, 's/.*/hello, &!/']
          - map: shout
            transform: upper
          - map: tidy
            transform: trim
          - done: result
            run: [cat]
        """
    /// Fails at its second stage with exit status 3.
    static let failing = """
        pipeline:
          - then: fetch
            run: [cat]
          - then: check
            shell: 'echo "status is bad" >&2; exit 3'
          - catch: report
            run: [cat]
        """
    /// Sleeps, then passes its input on.
    static let slow = """
        pool: slow
        pipeline:
          - then: nap
            sleep: 800ms
          - done: result
            run: [cat]
        """
}

/// A folder of its own for one test: `config/jobd.yaml`, `config/jobs.d/`
/// with the test definitions, and `var/` for the database and socket.
final class Sandbox: Sendable {
    let folder: String

    /// `createDatabase`: make the database as jobd does when it first
    /// starts (jobctl never creates it).
    init(
        definitions: [String: String] = [
            "hello": TestDefinitions.hello, "failing": TestDefinitions.failing,
            "slow": TestDefinitions.slow,
        ],
        configExtra: String = "", createDatabase: Bool = true
    ) throws {
        folder = NSTemporaryDirectory() + "jobctl-tests-" + UUID().uuidString
        let manager = FileManager.default
        try manager.createDirectory(atPath: folder + "/config/jobs.d", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: folder + "/var", withIntermediateDirectories: true)
        try """
        database: ../var/jobd.sqlite
        definitions: jobs.d
        socket: ../var/jobd.sock
        pools: { default: 4, slow: 1 }
        \(configExtra)
        """.write(toFile: configPath, atomically: true, encoding: .utf8)
        for (name, yaml) in definitions {
            try yaml.write(toFile: folder + "/config/jobs.d/\(name).yaml", atomically: true, encoding: .utf8)
        }
        // Other users (the permission tests) must be able to reach the config.
        chmod(folder, 0o755)
        // An empty file is an empty SQLite database; the first store opened
        // on it (jobctl's, or the test's) writes the schema.
        if createDatabase, !FileManager.default.createFile(atPath: databasePath, contents: nil) {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    var configPath: String { folder + "/config/jobd.yaml" }
    var databasePath: String { folder + "/var/jobd.sqlite" }
    var socketPath: String { folder + "/var/jobd.sock" }

    func file(_ name: String) -> String { folder + "/" + name }

    /// Runs jobctl with `--config` (unless `config: false`) after `arguments`.
    func jobctl(
        _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:], config: Bool = true,
        directory: String? = nil, asNobody: Bool = false
    ) async throws -> ChildResult {
        let arguments = arguments + (config ? ["--config", configPath] : [])
        let (executable, argv) =
            asNobody
            ? ("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", jobctlPath] + arguments)
            : (jobctlPath, arguments)
        return try await runChild(
            executable, argv, stdin: stdin, environment: environment,
            directory: directory ?? folder)
    }

    /// A store on the sandbox's database (created if need be).
    func store() throws -> SQLiteJobStore {
        try SQLiteJobStore(SQLiteJobStoreConfiguration(path: databasePath, checkpointInterval: nil))
    }

    /// Runs `body` with a store on the sandbox's database, closed afterwards.
    func withStore<T: Sendable>(_ body: (SQLiteJobStore) async throws -> T) async throws -> T {
        let store = try store()
        do {
            let value = try await body(store)
            try await store.close()
            return value
        } catch {
            try? await store.close()
            throw error
        }
    }

    /// A job left in `state` as an engine would leave it (see ``JobSeeder``).
    func seed(
        _ state: JobState, definition: String = "hello", input: String = "in", result: String = "out",
        error: String = "exit status 3: bad total"
    ) async throws -> Int64 {
        try await withStore { store in
            try await JobSeeder(store: store).job(
                state, definition: definition, input: input, result: result, error: error)
        }
    }

    /// Job `id` with its stages, as the database holds it.
    func job(_ id: Int64) async throws -> JobDetail {
        let detail = try await withStore { try await $0.job(id) }
        return try #require(detail, "no job \(id)")
    }

    /// How many jobs the database holds (0 if it does not exist).
    func jobCount() async throws -> Int {
        guard FileManager.default.fileExists(atPath: databasePath) else { return 0 }
        let store = try store()
        let counts = try await store.countJobs(in: Set(JobState.allCases))
        try await store.close()
        return counts.values.reduce(0, +)
    }

    /// The loaded config and definitions, as jobd would load them.
    func configuration() throws -> Configuration {
        try Configuration.load(at: ConfigLocator.Location(path: configPath, reason: .commandLine)).get()
    }
}
