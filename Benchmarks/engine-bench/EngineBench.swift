import BenchmarkSupport
import Foundation
import JobConfig
import JobConfigStore
import JobEngine
import JobProcesses
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import JobValues
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An engine on a fresh database with one definition.
struct EngineBench {
    let folder = temporaryFolder("engine-bench")
    let ended = EndCounter()
    let store: SQLiteJobStore
    let engine: Engine
    let definition: JobDefinition
    /// Every definition given, by name (the first is `definition`).
    let definitions: [String: JobDefinition]

    init(yaml: String, pool: Int, mapConcurrency: Int = 4) {
        self.init(yamls: [yaml], pool: pool, mapConcurrency: mapConcurrency)
    }

    init(yamls: [String], pool: Int, mapConcurrency: Int = 4) {
        let folder = self.folder
        let parsed = yamls.enumerated().map { index, yaml in
            try! DefinitionLoader().parse(yaml: yaml, path: folder + "/bench\(index).yaml").get()
        }
        definition = parsed[0]
        definitions = Dictionary(uniqueKeysWithValues: parsed.map { ($0.name, $0) })
        store = try! SQLiteJobStore(SQLiteJobStoreConfiguration(path: folder + "/jobd.sqlite"))
        let ended = self.ended
        var logger = Logger(label: "engine-bench")
        logger.logLevel = .notice
        engine = Engine(
            configuration: EngineConfiguration(
                queues: ["map": mapConcurrency, "return": 1], pools: ["default": pool], logger: logger,
                onJobEnd: { _ in ended.add() }),
            definitions: parsed, store: store,
            // As jobd runs it (Daemon.swift).
            processRunner: ProcessRunner(completesOnLoopThread: true))
    }

    var databasePath: String { folder + "/jobd.sqlite" }

    func submit(_ count: Int, runAt: Date? = nil) {
        Self.submit(count, of: definition, to: store, runAt: runAt)
    }

    /// `count` jobs of `definition`, in batches of 1,000.
    static func submit(_ count: Int, of definition: JobDefinition, to store: SQLiteJobStore, runAt: Date? = nil) {
        blocking {
            var left = count
            while left > 0 {
                let batch = min(left, 1000)
                _ = try await store.submit(
                    (0..<batch).map { index in
                        definition.newJob(input: Data("  Job \(index) Of The Bench  ".utf8), runAt: runAt)
                    })
                left -= batch
            }
        }
    }

    /// Stage log lines kept, over every job (ids from 1).
    func countLogLines() -> Int {
        let store = self.store
        return blocking {
            var total = 0
            var id: Int64 = 1
            while try await store.job(id) != nil {
                total += try await store.stageLog(StageLogQuery(jobID: id, limit: 10_000)).count
                id += 1
            }
            return total
        }
    }

    func count(_ states: Set<JobState>) -> Int {
        let store = self.store
        return blocking { try await store.countJobs(in: states).values.reduce(0, +) }
    }

    /// Waits until `total` jobs have ended; returns the time it took and,
    /// when `sampleMemory`, the largest resident set seen meanwhile (read
    /// from /proc every 2 ms). Without it the wait costs nothing while the
    /// engine runs: reading /proc that often took ~11 µs of CPU a process
    /// from the engine's process pipelines.
    func waitEnded(
        _ total: Int, since start: ContinuousClock.Instant, sampleMemory: Bool = false
    ) -> (seconds: Double, peakResident: Int) {
        guard sampleMemory else {
            ended.wait(for: total)
            return ((ContinuousClock.now - start).timeInterval, 0)
        }
        var peak = Machine.residentBytes()
        while ended.value < total {
            peak = max(peak, Machine.residentBytes())
            usleep(2_000)
        }
        return ((ContinuousClock.now - start).timeInterval, peak)
    }

    func stop() {
        let engine = self.engine
        blocking { await engine.drain(grace: .seconds(5)) }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

final class EndCounter: Sendable {
    private let count = Atomic<Int>(0)
    /// The count `wait(for:)` waits for; `reached` is signalled when it is hit.
    private let target = Atomic<Int>(.max)
    private let reached = DispatchSemaphore(value: 0)

    func add() {
        if count.add(1, ordering: .sequentiallyConsistent).newValue == target.load(ordering: .sequentiallyConsistent) {
            reached.signal()
        }
    }

    var value: Int { count.load(ordering: .relaxed) }

    /// Blocks until `total` have ended (one waiter at a time).
    func wait(for total: Int) {
        target.store(total, ordering: .sequentiallyConsistent)
        while count.load(ordering: .sequentiallyConsistent) < total {
            _ = reached.wait(timeout: .now() + .milliseconds(100))
        }
        target.store(.max, ordering: .sequentiallyConsistent)
    }
}

let threeMaps = """
    name: three-maps
    pipeline:
      - map: trim
        transform: trim
      - map: upper
        transform: upper
      - map: lower
        transform: lower
    """

/// The same with concurrency limits far above the pool: every claim counts
/// the slots, none binds (a key per job: its input).
let threeMapsLimited = threeMaps + "\nlimit: { global: 1000000, per-key: 1000, key: input }"

let threeCats = """
    name: three-cats
    pipeline:
      - then: one
        run: [cat]
      - then: two
        run: [cat]
      - then: three
        run: [cat]
    """

/// `engine-bench --submit PATH COUNT DELAY`: the child that submits jobs for
/// the memory figures, so that submitting does not count in the engine's
/// memory. Returns false when the arguments are not that.
func submitAsChild(_ arguments: [String]) -> Bool {
    guard arguments.count == 4, arguments[0] == "--submit", let count = Int(arguments[2]),
        let delay = Double(arguments[3])
    else { return false }
    let store = try! SQLiteJobStore(SQLiteJobStoreConfiguration(path: arguments[1]))
    let definition = try! DefinitionLoader().parse(yaml: threeMaps, path: "/bench/three-maps.yaml").get()
    EngineBench.submit(count, of: definition, to: store, runAt: delay > 0 ? Date() + delay : nil)
    return true
}

/// Submits from a child process (this executable with `--submit`), waiting for it.
func submitFromChild(_ path: String, _ count: Int, delay: Double) {
    let done = DispatchSemaphore(value: 0)
    ProcessRunner().run(
        ProcessSpec(
            .argv([CommandLine.arguments[0], "--submit", path, String(count), String(delay)]), timeout: .seconds(600))
    ) { result in
        if case let .failure(error) = result { fatalError("submitting from a child failed: \(error)") }
        done.signal()
    }
    done.wait()
}

/// Child jobs: a parent whose `each` stage starts one `fan-child` per
/// line, and the child, one in-process stage.
let fanParent = """
    name: fan
    pipeline:
      - each: children
        definition: fan-child
        max-children: 100000
    """
let fanChild = """
    name: fan-child
    pipeline:
      - map: upper
        transform: upper
    """
