// engine-bench: the engine's throughput and memory, on this machine.
//
//     swift run -c release engine-bench [--jobs N] [--process-jobs N] [--pending N] [--pool N] [--only a,b,c]
//
// a. 3-stage in-process pipelines (three `map` transforms), every stage
//    persisted in SQLite: jobs/s.
// b. 3-stage pipelines of `run: [cat]`, as a share of a plain posix_spawn +
//    wait loop of cat measured in the same run.
// c. Resident memory with 100,000 pending jobs in the database.

import Dispatch
import Foundation
import CBenchSupport
import GRDBSQLite
import JobConfig
import JobEngine
import JobProcesses
import Logging
import Synchronization
@_spi(Maintenance) import JobStore

#if canImport(Glibc)
import Glibc
#endif

// MARK: A child that submits jobs (so they do not count in the engine's memory)

if CommandLine.arguments.count == 5, CommandLine.arguments[1] == "--submit" {
    let path = CommandLine.arguments[2]
    let count = Int(CommandLine.arguments[3]) ?? 0
    let delay = Double(CommandLine.arguments[4]) ?? 0
    let store = try! SQLiteJobStore(JobStoreConfiguration(path: path))
    let definition = try! DefinitionLoader().parse(yaml: threeMapsText, path: "/bench/three-maps.yaml").get()
    let runAt = delay > 0 ? Date() + delay : nil
    blocking {
        var left = count
        while left > 0 {
            let batch = min(left, 1000)
            _ = try await store.submit((0..<batch).map { index in
                definition.newJob(input: Data("  Job \(index) Of The Bench  ".utf8), runAt: runAt)
            })
            left -= batch
        }
    }
    exit(0)
}

// MARK: Arguments

var settings: [String: String] = [:]
var pending = CommandLine.arguments.dropFirst()[...]
while let key = pending.popFirst() {
    guard key.hasPrefix("--"), let value = pending.popFirst() else {
        print("usage: engine-bench [--jobs N] [--process-jobs N] [--pending N] [--pool N] [--only a,b,c]")
        exit(2)
    }
    settings[String(key.dropFirst(2))] = value
}
let inProcessJobs = Int(settings["jobs"] ?? "") ?? 30_000
let processJobs = Int(settings["process-jobs"] ?? "") ?? 300
let pendingJobs = Int(settings["pending"] ?? "") ?? 100_000
let poolSize = Int(settings["pool"] ?? "") ?? 256
let only = Set((settings["only"] ?? "a,b,c").split(separator: ",").map(String.init))

// MARK: Support

func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "engine-bench-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return (Int(fields.count > 1 ? fields[1] : "0") ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Blocks the main thread on async work (the benchmark's own driver only).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try! box.get()
}

final class EndCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: written once before the semaphore is signalled,
    // read once after it is waited for.
    private var result: Swift.Result<T, any Error>?
    func set(_ result: Swift.Result<T, any Error>) { self.result = result }
    func get() throws -> T { try result!.get() }
}

/// An engine on a fresh database with one definition.
struct Bench {
    let folder = temporaryFolder()
    let ended = EndCounter()
    let store: SQLiteJobStore
    let engine: Engine
    let definition: JobDefinition

    init(yaml: String, pool: Int, mapConcurrency: Int = 4) {
        definition = try! DefinitionLoader().parse(yaml: yaml, path: folder + "/bench.yaml").get()
        store = try! SQLiteJobStore(JobStoreConfiguration(path: folder + "/jobd.sqlite"))
        let ended = self.ended
        var logger = Logger(label: "engine-bench")
        logger.logLevel = .notice
        engine = Engine(
            configuration: EngineConfiguration(
                queues: ["map": mapConcurrency, "return": 1], pools: ["default": pool], logger: logger,
                onJobEnd: { _ in ended.add() }),
            definitions: [definition], store: store, processRunner: ProcessRunner())
    }

    func submit(_ count: Int, runAt: Date? = nil) {
        let store = self.store
        let definition = self.definition
        blocking {
            var left = count
            while left > 0 {
                let batch = min(left, 1000)
                _ = try await store.submit((0..<batch).map { index in
                    definition.newJob(input: Data("  Job \(index) Of The Bench  ".utf8), runAt: runAt)
                })
                left -= batch
            }
        }
    }

    func count(_ states: Set<JobState>) -> Int {
        let store = self.store
        return blocking { try await store.countJobs(in: states).values.reduce(0, +) }
    }

    /// Waits until `total` jobs are resolved; returns the time it took and
    /// the largest resident set seen meanwhile.
    func waitResolved(_ total: Int, since start: ContinuousClock.Instant) -> (Duration, Int) {
        var peak = residentBytes()
        while ended.value < total {
            peak = max(peak, residentBytes())
            usleep(2_000)
        }
        return (ContinuousClock.now - start, peak)
    }

    func stop() {
        let engine = self.engine
        blocking { await engine.drain(grace: .seconds(5)) }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

let threeMaps = threeMapsText
var threeMapsText: String { """
    name: three-maps
    pipeline:
      - map: trim
        transform: trim
      - map: upper
        transform: upper
      - map: lower
        transform: lower
    """ }

print("engine-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores; pool \(poolSize) (in-process), 16 (processes)")

// MARK: a. In-process pipelines

if only.contains("a") {
    let bench = Bench(yaml: threeMaps, pool: poolSize)
    bench.submit(inProcessJobs)
    let start = ContinuousClock.now
    bench.engine.start()
    let (elapsed, _) = bench.waitResolved(inProcessJobs, since: start)
    let failed = bench.count([.rejected, .cancelled])
    let stats = bench.store.writerStatistics
    print(String(format: "a. 3 map stages, each persisted:   %8.0f jobs/s  (%d jobs in %.2f s, %d failed; %d writes in %d transactions)",
                 Double(inProcessJobs) / elapsed.seconds, inProcessJobs, elapsed.seconds, failed, stats.writes, stats.transactions))
    print("   target ≥ 10,000 jobs/s")
    bench.stop()
}

// MARK: b. Process pipelines against a plain spawn loop

/// The plain posix_spawn loop (CBenchSupport), with this bench's input.
func plainLoop(_ count: Int) -> Double {
    let input = Array("  Job 1 Of The Bench  ".utf8)
    return input.withUnsafeBufferPointer { bench_plain_spawn_loop(Int32(count), $0.baseAddress, $0.count) }
}

if only.contains("b") {
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
    var plain: [Double] = []
    var one: [Double] = []
    var sixteen: [Double] = []
    func engineRate(pool: Int) -> Double {
        let bench = Bench(yaml: threeCats, pool: pool)
        bench.submit(processJobs)
        let start = ContinuousClock.now
        bench.engine.start()
        let (elapsed, _) = bench.waitResolved(processJobs, since: start)
        let failed = bench.count([.rejected, .cancelled])
        if failed > 0 { print("   \(failed) jobs failed") }
        bench.stop()
        return Double(processJobs * 3) / elapsed.seconds
    }
    _ = plainLoop(30)
    // Rounds interleaved, so that load from elsewhere hits each alike.
    for _ in 0..<3 {
        plain.append(plainLoop(processJobs * 3))
        one.append(engineRate(pool: 1))
        sixteen.append(engineRate(pool: 16))
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    func runs(_ values: [Double]) -> String { values.map { String(format: "%.0f", $0) }.joined(separator: ", ") }
    let base = median(plain)
    print(String(format: "b. plain posix_spawn + wait loop of cat:     %6.0f processes/s (runs: %@)", base, runs(plain)))
    for (label, values) in [("pool 1, one job at a time", one), ("pool 16", sixteen)] {
        let rate = median(values)
        print(String(format: "   3 × run: [cat], %@: %6.0f processes/s = %4.0f pipelines/s, %3.0f%% of plain (runs: %@)",
                     label.padding(toLength: 25, withPad: " ", startingAt: 0), rate, rate / 3, rate / base * 100, runs(values)))
    }
    print("   target ≥ 80% of plain")
}

// MARK: c. Memory with pending jobs

if only.contains("c") {
    /// Submits from a child process, waiting for it.
    func submitFromChild(_ path: String, _ count: Int, delay: Double) {
        let done = DispatchSemaphore(value: 0)
        ProcessRunner().run(ProcessSpec(
            .argv([CommandLine.arguments[0], "--submit", path, String(count), String(delay)]), timeout: .seconds(600))
        ) { result in
            if case let .failure(error) = result { print("   submitting failed: \(error)") }
            done.signal()
        }
        done.wait()
    }
    /// Heap in use outside SQLite (whose page caches are bounded by its
    /// `cache_size`: 64 MiB for the writer, 16 MiB per reader).
    func engineHeap() -> Int { bench_heap_bytes_in_use() - Int(sqlite3_memory_used()) }
    func line(_ label: String, _ rss: Int, _ heap: Int, from base: (Int, Int)) {
        func delta(_ bytes: Int) -> String { String(format: "%+.1f", Double(bytes) / 1_048_576) }
        print("   \(label.padding(toLength: 32, withPad: " ", startingAt: 0)) resident \(mebibytes(rss)) (\(delta(rss - base.0))), "
              + "SQLite \(mebibytes(Int(sqlite3_memory_used()))), heap outside SQLite \(mebibytes(heap)) (\(delta(heap - base.1)))")
    }
    let bench = Bench(yaml: threeMaps, pool: poolSize)
    let path = bench.folder + "/jobd.sqlite"
    bench.engine.start()
    // Warm up: caches, queues, the store's statements.
    submitFromChild(path, 2_000, delay: 0)
    bench.engine.nudge()
    _ = bench.waitResolved(2_000, since: .now)
    sleep(1)
    let base = (residentBytes(), engineHeap())
    print("c. memory of the engine's process (jobs submitted by a child process)")
    line("idle, 2,000 jobs done", base.0, base.1, from: base)
    for round in 1...2 {
        submitFromChild(path, pendingJobs, delay: 3600)
        bench.engine.nudge()
        sleep(2)
        line("\(round * pendingJobs) delayed jobs pending", residentBytes(), engineHeap(), from: base)
    }
    submitFromChild(path, pendingJobs, delay: 0)
    let start = ContinuousClock.now
    bench.engine.nudge()
    let (elapsed, peak) = bench.waitResolved(2_000 + pendingJobs, since: start)
    sleep(1)
    line("ran \(pendingJobs) more in \(String(format: "%.1f", elapsed.seconds)) s", residentBytes(), engineHeap(), from: base)
    print("   peak resident while running: \(mebibytes(peak)); SQLite's page caches are bounded (64 MiB writer, 16 MiB per reader)")
    print("   target: the engine's memory does not grow with pending jobs")
    bench.stop()
}
