import Foundation
import JobConfig
import JobConfigStore
import JobProcesses
import JobStore
import JobStoreSQLite
import JobValues
import Logging
import Synchronization
import TestSupport
import Testing

@testable import JobEngine

/// One process runner for every engine of this test process, shared on
/// purpose: its event loop is one thread, whichever engine starts children.
/// As jobd runs it: completions on the process loop's thread.
let testProcessRunner = ProcessRunner(completesOnLoopThread: true)

/// An engine over a real SQLite file in a fresh folder, with definitions
/// given as YAML text.
final class EngineHarness: Sendable {
    let folder: String
    let store: SQLiteJobStore
    let engine: Engine
    let configuration: EngineConfiguration
    let definitions: [String: JobDefinition]
    let logs = LogLines()

    /// `definitions`: the YAML text of each job definition. `configure`
    /// changes the engine's configuration before it is made.
    init(
        _ yamls: [String], folder: String? = nil, pools: [String: Int] = ["default": 16],
        queues: [String: Int] = ["map": 4, "return": 1], valueCap: Int = 1 << 20, killGrace: Duration = .seconds(1),
        customAction: CustomAction? = nil, start: Bool = true,
        configure: (inout EngineConfiguration) -> Void = { _ in }
    ) throws {
        let folder = try folder ?? makeTemporaryFolder()
        self.folder = folder
        var configuration = EngineConfiguration(
            queues: queues, pools: pools, killGrace: killGrace, outputLimit: valueCap,
            leaseDuration: .seconds(5), renewInterval: .milliseconds(100), pollInterval: .milliseconds(200),
            logger: logs.logger)
        configure(&configuration)
        self.configuration = configuration
        let loader = DefinitionLoader(context: JobEngineTests.definitionContext(of: configuration))
        var definitions: [String: JobDefinition] = [:]
        for (index, yaml) in yamls.enumerated() {
            let definition = try loader.parse(yaml: yaml, path: folder + "/def\(index).yaml").get()
            definitions[definition.name] = definition
        }
        self.definitions = definitions
        store = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(
                path: folder + "/jobd.sqlite", maxValueBytes: valueCap, checkpointInterval: nil))
        // `conf` is process-wide and the Promises tests check its defaults
        // while these run: an engine never touches it (the finalizer path,
        // which needs `conf.leakHandler`, is tested in a child process).
        engine = Engine(
            configuration: configuration, definitions: Array(definitions.values), store: store,
            processRunner: testProcessRunner, customAction: customAction)
        if start { engine.start() }
    }

    /// Queue and pool names that definitions are checked against.
    var definitionContext: DefinitionContext { JobEngineTests.definitionContext(of: configuration) }

    func file(_ name: String) -> String { folder + "/" + name }

    /// Whether a log line mentions job `id` and holds `text`.
    func logged(job id: Int64, _ text: String) -> Bool {
        logs.all.contains { $0.contains("job \(id)") && $0.contains(text) }
    }

    @discardableResult
    func submit(_ name: String, input: [UInt8], priority: Int = 0, delay: Duration? = nil) async throws -> Int64 {
        let definition = try #require(definitions[name])
        let runAt = delay.map { Date() + $0.timeInterval }
        let id = try await store.submit(definition.newJob(input: Data(input), priority: priority, runAt: runAt)).id
        engine.nudge()
        return id
    }

    /// `count` jobs of `name` in one transaction, then one nudge: all are
    /// pending when the engine next claims, however late the test's own
    /// awaits resume on a loaded machine.
    func submit(_ name: String, count: Int) async throws -> [Int64] {
        let definition = try #require(definitions[name])
        let jobs = (0..<count).map { _ in definition.newJob(input: Data()) }
        let ids = try await store.submit(jobs).map(\.id)
        engine.nudge()
        return ids
    }

    @discardableResult
    func submit(_ name: String, input: String = "", priority: Int = 0, delay: Duration? = nil) async throws -> Int64 {
        try await submit(name, input: Array(input.utf8), priority: priority, delay: delay)
    }

    /// Waits until job `id` is resolved.
    func resolved(_ id: Int64, within limit: Duration = .seconds(20)) async throws -> JobDetail {
        let deadline = ContinuousClock.now + limit
        while true {
            let detail = try #require(try await store.job(id))
            if detail.job.state.isResolved { return detail }
            if ContinuousClock.now > deadline {
                Issue.record(
                    "job \(id) still \(detail.job.state) after \(limit): \(detail.stages.map { "\($0.name)=\($0.state)" })"
                )
                return detail
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until `condition` holds on job `id`.
    func waitFor(
        _ id: Int64, within limit: Duration = .seconds(20), _ condition: (JobDetail) -> Bool
    ) async throws -> JobDetail {
        let deadline = ContinuousClock.now + limit
        while true {
            let detail = try #require(try await store.job(id))
            if condition(detail) { return detail }
            if ContinuousClock.now > deadline {
                Issue.record(
                    "job \(id) never reached the condition: \(detail.job.state) \(detail.stages.map { "\($0.name)=\($0.state)" })"
                )
                return detail
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops the engine (its jobs stay resumable).
    func stop() async {
        await engine.drain(grace: .zero)
    }

    func read(_ name: String) -> String {
        (try? String(contentsOfFile: file(name), encoding: .utf8)) ?? ""
    }

    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }
}

extension JobDetail {
    func stage(_ name: String) -> Stage? { stages.first { $0.name == name } }

    var resultText: String? { job.result.map { String(decoding: $0, as: UTF8.self) } }

    var states: [String: StageState] {
        Dictionary(uniqueKeysWithValues: stages.map { ($0.name, $0.state) })
    }
}

extension Stage {
    var text: String? { value.map { String(decoding: $0, as: UTF8.self) } }
}

/// Whether a process with this pid exists (and is not a zombie we could see).
func processExists(_ pid: Int32) -> Bool {
    kill(pid, 0) == 0
}

/// Whether process group `pgid` is empty within `limit` (a member killed
/// with SIGKILL is gone once its new parent has reaped it). A liveness
/// bound, not a speed one: on a loaded machine the orphans' reaping by
/// init can take seconds.
func processGroupGone(_ pgid: Int32, within limit: Duration = .seconds(30)) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while kill(-pgid, 0) == 0 {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return true
}

/// The helper executable `engine-test-worker`, built beside the test bundle.
var workerPath: String {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [bundle, bundle.deletingLastPathComponent()] {
        let path = candidate.appendingPathComponent("engine-test-worker").path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return repositoryRoot + "/.build/debug/engine-test-worker"
}

func definitionContext(of configuration: EngineConfiguration) -> DefinitionContext {
    DefinitionContext(
        queues: Set(configuration.queues.keys), pools: Set(configuration.pools.keys),
        valueCap: configuration.outputLimit)
}

/// How long a resolved job ran, by the times the engine recorded on its own
/// threads (claim to finish). A bound on it holds however late the test's
/// own awaits resume: on two cores, Swift Testing's cooperative pool is
/// often busy with CPU-heavy tests running beside this one.
func recordedRunTime(_ detail: JobDetail) -> Duration {
    guard let started = detail.job.startedAt, let finished = detail.job.finishedAt else {
        return .seconds(Int64.max / 2)
    }
    return .milliseconds(Int64(finished.timeIntervalSince(started) * 1000))
}
