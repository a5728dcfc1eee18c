// engine-bench: the engine's throughput and memory, on this machine; each
// figure beside its bound (Thresholds.swift), exit 1 when one misses.
//
//     swift run -c release engine-bench [--quick] [--jobs N] [--process-jobs N] [--pending N] [--pool N]
//                                       [--children N] [--rounds N] [--only a,b,c,d,e] [--tsv FILE]
//
// a. 3-stage in-process pipelines (three `map` transforms), every stage
//    persisted in SQLite, as a share of the store driven directly (claim,
//    3 stage results, finish) in the same rounds.
// b. 3-stage pipelines of `run: [cat]`, as a share of a plain posix_spawn
//    + wait loop of cat in the same rounds: pool 1 against the loop on one
//    thread, pool 16 against the loop on as many threads as run fastest.
// c. The engine's memory with pending jobs in the database: it must not
//    grow with their number.
// d. 3-stage pipelines whose stages each write 100 lines to stderr (every
//    line kept in stage_logs), as a share of the same stages writing them
//    to /dev/null, in the same rounds.
// e. Child jobs: one parent fanning out into N in-process children and
//    joining them, as a share of N independent jobs of the child's
//    definition in the same rounds; and the join's latency, from the last
//    child's end to the parent's stage settled, median of small fan-outs.

import BenchmarkSupport
import Foundation
import GRDBSQLite
import JobConfigStore
import JobEngine
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import JobValues
import StoreCycle

#if canImport(Glibc)
import Glibc
#endif

if submitAsChild(Array(CommandLine.arguments.dropFirst())) { exit(0) }

let arguments = BenchArguments(
    usage: "engine-bench [--quick] [--jobs N] [--process-jobs N] [--pending N] [--pool N] [--children N] [--rounds N]"
        + " [--only a,b,c,d,e] [--tsv FILE]",
    options: ["jobs", "process-jobs", "pending", "pool", "children", "rounds", "only"])
let inProcessJobs = arguments.int("jobs", full: 30_000, quick: 10_000)
let processJobs = arguments.int("process-jobs", full: 1000, quick: 300)
let pendingJobs = arguments.int("pending", full: 100_000, quick: 50_000)
let poolSize = arguments.int("pool", full: 256)
let rounds = arguments.int("rounds", full: 3)
let childJobs = arguments.int("children", full: 10_000, quick: 2_000)
let only = Set((arguments.string("only") ?? "a,b,c,d,e").split(separator: ",").map(String.init))

var report = Report("engine-bench", arguments)
/// `100,000`.
func count(_ value: Int) -> String { Report.format(Double(value), 0) }
print("engine-bench: \(Machine.summary); pool \(poolSize) (in-process), 1 and 16 (processes)")

// MARK: a. In-process pipelines against the store's own claim cycle

if only.contains("a") {
    var failed = 0
    var cpuPerJob: [Double] = []
    var writes = (count: 0, transactions: 0)
    /// Jobs per second of the engine running `inProcessJobs` three-map pipelines.
    func engineRate(_ yaml: String = threeMaps) -> Double {
        let bench = EngineBench(yaml: yaml, pool: poolSize)
        bench.submit(inProcessJobs)
        let watch = Stopwatch()
        bench.engine.start()
        let (seconds, _) = bench.waitEnded(inProcessJobs, since: watch.wall)
        cpuPerJob.append(watch.cpuSeconds / Double(inProcessJobs) * 1e6)
        writes = (bench.store.writerStatistics.writes, bench.store.writerStatistics.transactions)
        failed += bench.count([.rejected, .cancelled])
        bench.stop()
        return Double(inProcessJobs) / seconds
    }
    /// Jobs per second of 16 workers driving a store directly: claim, 3
    /// stage results, finish (StoreCycle), the same writes as the engine's.
    func storeCycleRate() -> Double {
        let folder = temporaryFolder("engine-bench-cycle")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try! SQLiteJobStore(SQLiteJobStoreConfiguration(path: folder + "/jobd.sqlite"))
        return blocking {
            let outcome = try await ClaimCycles.run(store, jobs: inProcessJobs, mode: .sequential)
            try await store.close()
            return outcome.jobsPerSecond
        }
    }
    // Baselines first (the engine's bound is a share of one), then the engine.
    var series = [
        Series("store claim cycle, 16 workers", unit: "jobs/s", storeCycleRate),
        Series("3 map stages, pool \(poolSize)", unit: "jobs/s") { engineRate() },
        Series("same with limits (global, per key; not binding)", unit: "jobs/s") { engineRate(threeMapsLimited) },
    ]
    Series.measure(&series, rounds: rounds)
    report.add(baseline: series[0], prefix: "a. ")
    report.add(
        series[1], shareOf: series[0], atLeast: Thresholds.inProcessShareOfStoreCycle, prefix: "a. ",
        note: " (≥ 10,000 on an idle machine); \(Report.format(median(cpuPerJob), 0)) µs CPU a job; "
            + "\(count(writes.count)) writes in \(count(writes.transactions)) transactions")
    report.add(
        series[2], shareOf: series[1], atLeast: Thresholds.limitedShareOfUnlimited, prefix: "a. ",
        note: "; limits counted in every claim")
    report.add("a. jobs rejected or cancelled", Double(failed), unit: "", .atMost(0), digits: 0)
}

// MARK: b. Process pipelines against a plain spawn loop

if only.contains("b") {
    let input = Array("  Job 1 Of The Bench  ".utf8)
    var failed = 0
    let processes = processJobs * 3
    /// CPU a process in each series' rounds (where the time goes):
    /// the spawner's own (jobd's threads, or the plain loop's) and the
    /// children's (`cat`, and each child's setup between clone and exec).
    var cpu: [String: (own: [Double], children: [Double])] = [:]
    func record(_ name: String, since watch: Stopwatch) {
        cpu[name, default: ([], [])].own.append(watch.cpuSeconds / Double(processes) * 1e6)
        cpu[name, default: ([], [])].children.append(watch.childrenCPUSeconds / Double(processes) * 1e6)
    }
    func timed(_ name: String, _ body: () -> Double) -> Double {
        let watch = Stopwatch()
        defer { record(name, since: watch) }
        return body()
    }
    func cpuNote(_ name: String) -> String {
        guard let figures = cpu[name], !figures.own.isEmpty else { return "" }
        return "; CPU a process: \(Report.format(median(figures.own), 0)) µs own, "
            + "\(Report.format(median(figures.children), 0)) µs children"
    }
    /// Processes per second of the engine running `processJobs` three-cat pipelines.
    func engineRate(pool: Int) -> Double {
        let bench = EngineBench(yaml: threeCats, pool: pool)
        bench.submit(processJobs)
        let watch = Stopwatch()
        bench.engine.start()
        let (seconds, _) = bench.waitEnded(processJobs, since: watch.wall)
        record("pool \(pool)", since: watch)
        failed += bench.count([.rejected, .cancelled])
        bench.stop()
        return Double(processes) / seconds
    }
    // Baselines first (an engine series' bound is a share of one), then the
    // engine. Pool 1 runs one process at a time, as the one-thread loop
    // does; pool 16 has every core busy, as the loop on N threads does
    // (N is the fastest of 1, 2 and 4 threads a core, found once
    // before the rounds).
    _ = Baselines.plainSpawnLoop(30, input: input)
    let probe = Baselines.fastestPlainThreads(processes, input: input)
    let threads = probe.threads
    let probeNote =
        "; threads tried: "
        + probe.rates.map { "\($0.threads) → \(Report.format($0.rate, 0))" }.joined(separator: ", ")
    var series = [
        Series("plain posix_spawn loop, 1 thread", unit: "processes/s") {
            timed("loop 1") { Baselines.plainSpawnLoop(processes, input: input) }
        },
        Series("plain posix_spawn loop, \(threads) threads", unit: "processes/s") {
            timed("loop N") { Baselines.plainSpawnThreads(processes, threads: threads, input: input) }
        },
        Series("3 × run: [cat], pool 1", unit: "processes/s") { engineRate(pool: 1) },
        Series("3 × run: [cat], pool 16", unit: "processes/s") { engineRate(pool: 16) },
    ]
    Series.measure(&series, rounds: rounds)
    let (oneThread, allThreads) = (series[0], series[1])
    report.add(baseline: oneThread, prefix: "b. ", note: cpuNote("loop 1"))
    report.add(baseline: allThreads, prefix: "b. ", note: probeNote + cpuNote("loop N"))
    for (entry, baseline, key) in [(series[2], oneThread, "pool 1"), (series[3], allThreads, "pool 16")] {
        report.add(
            entry, shareOf: baseline, atLeast: Thresholds.shareOfPlainLoop[entry.name], prefix: "b. ",
            note: " = \(Report.format(entry.median / 3, 0)) pipelines/s" + cpuNote(key))
    }
    report.add("b. jobs rejected or cancelled", Double(failed), unit: "", .atMost(0), digits: 0)
}

// MARK: c. Memory with pending jobs

if only.contains("c") {
    /// Heap in use outside SQLite (whose page caches are bounded by its
    /// `cache_size`: 64 MiB for the writer, 16 MiB per reader).
    func engineHeap() -> Int { heapBytesInUse() - Int(sqlite3_memory_used()) }
    let bench = EngineBench(yaml: threeMaps, pool: poolSize)
    bench.engine.start()
    // Warm up: caches, queues, the store's statements.
    submitFromChild(bench.databasePath, 2_000, delay: 0)
    bench.engine.nudge()
    _ = bench.waitEnded(2_000, since: .now)
    sleep(1)
    let idle = (resident: Machine.residentBytes(), heap: engineHeap())
    var pending: [(resident: Int, heap: Int)] = []
    for _ in 1...2 {
        submitFromChild(bench.databasePath, pendingJobs, delay: 3600)
        bench.engine.nudge()
        sleep(2)
        pending.append((Machine.residentBytes(), engineHeap()))
    }
    func mib(_ bytes: Int) -> String { Report.format(mebibytes(bytes), 1) + " MiB" }
    // From N to 2N pending jobs: SQLite's caches and the engine's own
    // structures have filled by N, so what still grows is per job.
    report.add(
        "c. heap outside SQLite per pending job, \(count(pendingJobs)) → \(count(2 * pendingJobs)) pending",
        Double(pending[1].heap - pending[0].heap) / Double(pendingJobs), unit: "bytes",
        .atMost(Thresholds.heapBytesPerPendingJob),
        note: "idle \(mib(idle.heap)), then \(mib(pending[0].heap)), \(mib(pending[1].heap))", digits: 1)
    report.add(
        "c. resident memory per pending job, \(count(pendingJobs)) → \(count(2 * pendingJobs)) pending",
        Double(pending[1].resident - pending[0].resident) / Double(pendingJobs), unit: "bytes",
        .atMost(Thresholds.residentBytesPerPendingJob),
        note: "idle \(mib(idle.resident)), then \(mib(pending[0].resident)), \(mib(pending[1].resident))", digits: 1)
    submitFromChild(bench.databasePath, pendingJobs, delay: 0)
    let start = ContinuousClock.now
    bench.engine.nudge()
    let (seconds, peak) = bench.waitEnded(2_000 + pendingJobs, since: start, sampleMemory: true)
    sleep(1)
    report.add(
        "c. heap outside SQLite after running \(count(pendingJobs)) more", mebibytes(engineHeap()), unit: "MiB",
        note: String(
            format: "ran in %.1f s; resident %@, peak %@ (SQLite's caches: 64 MiB writer, 16 MiB per reader)",
            seconds, mib(Machine.residentBytes()), mib(peak)))
    bench.stop()
}

// MARK: d. Stage logs: stages writing 100 lines of stderr against the same writing none

if only.contains("d") {
    var failed = 0
    var kept: [Int] = []
    /// The engine's own CPU a process in each series' rounds, µs: where
    /// keeping the lines costs (the children's is the same in both).
    var ownCPU: [Bool: [Double]] = [:]
    func pipelines(logging: Bool) -> String {
        let words = (1...100).map(String.init).joined(separator: " ")
        let stage =
            "shell: \"printf 'log line %s of this stage, as a program writes it\\\\n' \(words) "
            + (logging ? ">&2" : "> /dev/null") + "; cat\""
        return """
            name: \(logging ? "logging" : "quiet")
            pipeline:
              - then: one
                \(stage)
              - then: two
                \(stage)
              - then: three
                \(stage)
            """
    }
    func engineRate(logging: Bool) -> Double {
        let bench = EngineBench(yaml: pipelines(logging: logging), pool: 16)
        bench.submit(processJobs)
        let watch = Stopwatch()
        bench.engine.start()
        let (seconds, _) = bench.waitEnded(processJobs, since: watch.wall)
        ownCPU[logging, default: []].append(watch.cpuSeconds / Double(processJobs * 3) * 1e6)
        failed += bench.count([.rejected, .cancelled])
        if logging { kept.append(bench.countLogLines()) }
        bench.stop()
        return Double(processJobs * 3) / seconds
    }
    var series = [
        Series("3 × shell, 100 lines to /dev/null each, pool 16", unit: "processes/s") { engineRate(logging: false) },
        Series("3 × shell, 100 lines of stderr kept each, pool 16", unit: "processes/s") { engineRate(logging: true) },
    ]
    Series.measure(&series, rounds: rounds)
    func cpuNote(_ logging: Bool) -> String {
        "; CPU a process: \(Report.format(median(ownCPU[logging] ?? []), 0)) µs own"
    }
    report.add(baseline: series[0], prefix: "d. ", note: cpuNote(false))
    report.add(
        series[1], shareOf: series[0], atLeast: Thresholds.stageLogShareOfQuiet, prefix: "d. ",
        note: "; lines kept a round: \(kept.map(count).joined(separator: ", ")) of \(count(processJobs * 300))"
            + cpuNote(true))
    report.add(
        "d. log lines missing", Double(processJobs * 300 * kept.count - kept.reduce(0, +)), unit: "",
        .atMost(0), digits: 0)
    report.add("d. jobs rejected or cancelled", Double(failed), unit: "", .atMost(0), digits: 0)
}

// MARK: e. Child jobs: fan-out and join against independent jobs

if only.contains("e") {
    var failed = 0
    /// Jobs per second of `childJobs` independent jobs of the child's definition,
    /// from their submit (as the children's time counts from their creation).
    func independentRate() -> Double {
        let bench = EngineBench(yamls: [fanChild, fanParent], pool: poolSize)
        let watch = Stopwatch()
        bench.submit(childJobs)
        bench.engine.start()
        let (seconds, _) = bench.waitEnded(childJobs, since: watch.wall)
        failed += bench.count([.rejected, .cancelled])
        bench.stop()
        return Double(childJobs) / seconds
    }
    /// Children per second of one parent fanning out into `childJobs` children, to its end.
    func fanOutRate() -> Double {
        let bench = EngineBench(yamls: [fanParent, fanChild], pool: poolSize)
        let store = bench.store
        let input = Data((0..<childJobs).map { "item \($0)" }.joined(separator: "\n").utf8)
        let parent = bench.definition
        let id = blocking { try await store.submit(parent.newJob(input: input)).id }
        let engine = bench.engine
        let follower = Task { await engine.followWakeUps() }
        let watch = Stopwatch()
        engine.start()
        // Every child's run and the parent's two (the one that starts the
        // children and waits, the one that joins them) end; then, had the
        // parent been woken early, it settles a moment later.
        let (seconds, _) = bench.waitEnded(childJobs + 2, since: watch.wall)
        while !blocking({ try await store.job(id)?.job.state.isResolved ?? true }) { usleep(1_000) }
        failed += bench.count([.rejected, .cancelled])
        follower.cancel()
        bench.stop()
        return Double(childJobs) / seconds
    }
    var series = [
        Series("\(count(childJobs)) independent jobs, pool \(poolSize)", unit: "jobs/s", independentRate),
        Series("1 parent, \(count(childJobs)) children joined, pool \(poolSize)", unit: "jobs/s", fanOutRate),
    ]
    Series.measure(&series, rounds: rounds)
    report.add(baseline: series[0], prefix: "e. ")
    report.add(series[1], shareOf: series[0], atLeast: Thresholds.fanOutShareOfIndependent, prefix: "e. ")

    // The join's latency: 30 fan-outs of 10 children, one after another.
    let bench = EngineBench(yamls: [fanParent, fanChild], pool: poolSize)
    let store = bench.store
    let engine = bench.engine
    let follower = Task { await engine.followWakeUps() }
    engine.start()
    var latencies: [Double] = []
    for _ in 0..<30 {
        let input = Data((0..<10).map(String.init).joined(separator: "\n").utf8)
        let id = blocking { try await store.submit(bench.definition.newJob(input: input)).id }
        while !blocking({ try await store.job(id)?.job.state.isResolved ?? true }) { usleep(500) }
        let (settled, lastChild) = blocking {
            let detail = try await store.job(id)
            let children = try await store.children(of: id, limit: 100)
            return (detail?.stages.first?.finishedAt, children.compactMap(\.finishedAt).max())
        }
        if let settled, let lastChild { latencies.append(settled.timeIntervalSince(lastChild) * 1000) }
    }
    failed += bench.count([.rejected, .cancelled])
    follower.cancel()
    bench.stop()
    report.add(
        "e. join after the last child ends, p50", median(latencies), unit: "ms",
        .atMost(Thresholds.joinLatencyP50Milliseconds),
        note:
            "p90 \(Report.format(percentile(latencies, 0.9), 1)) ms over \(latencies.count) fan-outs of 10 (ms timestamps)"
    )
    report.add("e. jobs rejected or cancelled", Double(failed), unit: "", .atMost(0), digits: 0)
}

report.finish()
