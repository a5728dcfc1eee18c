import Foundation
@_spi(Maintenance) import JobStore
import Synchronization

/// The figures of issue 3, each printed beside its target.
struct Benchmarks {
    struct Options {
        /// Where to build (or find, and keep) the 1,000,000-job database.
        var bigDatabasePath: String?
        var skipBig = false
        /// Run only these: writes, submit, cycle, reads.
        var only: Set<String> = []
        /// Fewer jobs, for profiling (1 = the figures' sizes).
        var scale = 1.0
        /// Runs of each throughput figure.
        var runs = 3
    }

    struct Figure {
        var name: String
        var value: Double
        var unit: String
        /// `nil` for figures printed for information only.
        var target: Double?
        var higherIsBetter: Bool

        var met: Bool {
            guard let target else { return true }
            return higherIsBetter ? value >= target : value <= target
        }
    }

    let options: Options
    let folder: String

    init(options: Options) {
        self.options = options
        folder = NSTemporaryDirectory() + "jobstore-bench-\(getpid())"
    }

    func run() async throws -> Bool {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        print("jobstore-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, databases in \(folder)")
        var figures: [Figure] = []
        func wanted(_ name: String) -> Bool { options.only.isEmpty || options.only.contains(name) }
        if wanted("writes") { figures.append(try await repeated { try await groupCommitWrites(path: $0) }) }
        if wanted("submit") { figures.append(try await repeated { try await batchSubmit(path: $0) }) }
        if wanted("cycle") {
            figures.append(try await repeated { try await claimCycles(.sequential, path: $0) })
            figures.append(try await repeated { try await claimCycles(.withStarts, path: $0) })
            figures.append(try await repeated { try await claimCycles(.pipelined, path: $0) })
        }
        if wanted("reads") && !options.skipBig {
            figures += try await reads(jobs: 10_000, path: folder + "/small.sqlite", label: "10k")
            let big = options.bigDatabasePath ?? folder + "/big.sqlite"
            figures += try await reads(jobs: 1_000_000, path: big, label: "1M")
        }
        print("")
        let missed = figures.filter { !$0.met }
        print(missed.isEmpty ? "all targets met" : "targets missed: \(missed.map(\.name).joined(separator: "; "))")
        return missed.isEmpty
    }

    // MARK: Figures

    /// Stage results from 256 jobs at once, each job writing its 50 stages
    /// one after the other, every write waiting for its acknowledgement.
    func groupCommitWrites(path: String) async throws -> Figure {
        let store = try SQLiteJobStore(path: path)
        let stages = (0..<50).map { StagePlan(name: "s\($0)", kind: "then") }
        for _ in 0..<max(1, Int(8 * options.scale)) {
            _ = try await store.submit((0..<500).map { _ in NewJob(definition: "w", stages: stages) })
        }
        var claimed: [ClaimedJob] = []
        while true {
            let batch = try await store.claim(pool: "default", owner: "bench", limit: 1000, leaseDuration: .seconds(3600))
            if batch.isEmpty { break }
            claimed += batch
        }
        let lanes = 256
        let jobs = claimed
        let total = jobs.count * stages.count
        let failures = Mutex(0)
        let watch = Stopwatch()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let lanesLeft = Mutex(lanes)
            @Sendable func step(lane: Int, jobIndex: Int, position: Int) {
                guard jobIndex < jobs.count else {
                    if lanesLeft.withLock({ $0 -= 1; return $0 }) == 0 { done.resume() }
                    return
                }
                let job = jobs[jobIndex]
                let result = StageResult(
                    lease: job.lease, position: position, outcome: .fulfilled(Data("value \(jobIndex)/\(position)\n".utf8)))
                store.recordStageResult(result) { outcome in
                    if case .failure = outcome { failures.withLock { $0 += 1 } }
                    if position + 1 < stages.count {
                        step(lane: lane, jobIndex: jobIndex, position: position + 1)
                    } else {
                        step(lane: lane, jobIndex: jobIndex + lanes, position: 0)
                    }
                }
            }
            for lane in 0..<lanes { step(lane: lane, jobIndex: lane, position: 0) }
        }
        let seconds = watch.report(operations: total, unit: "write")
        let stats = store.writerStatistics
        print("  (\(stats.transactions) transactions, \(String(format: "%.1f", Double(stats.writes) / Double(max(stats.transactions, 1)))) writes each)")
        try await store.close()
        let failed = failures.withLock { $0 }
        guard failed == 0 else { throw BenchError("\(failed) stage-result writes failed") }
        return Figure(
            name: "stage-result writes, group commit (256 jobs writing at once, \(total) writes)",
            value: Double(total) / seconds, unit: "writes/s", target: 50_000, higherIsBetter: true)
    }

    /// 100 batches of 1,000 jobs with 3 stages each, one transaction per batch.
    func batchSubmit(path: String) async throws -> Figure {
        let store = try SQLiteJobStore(path: path)
        let plan = [StagePlan(name: "fetch", kind: "then"), StagePlan(name: "total", kind: "map"), StagePlan(name: "publish", kind: "done")]
        let batches = max(1, Int(100 * options.scale))
        let batchSize = 1000
        let watch = Stopwatch()
        for batch in 0..<batches {
            _ = try await store.submit((0..<batchSize).map { index in
                NewJob(definition: "report", input: Data("line \(batch * batchSize + index)".utf8), stages: plan)
            })
        }
        let seconds = watch.report(operations: batches * batchSize, unit: "job")
        try await store.close()
        return Figure(
            name: "batch submit (batches of \(batchSize) jobs, 3 stages each)",
            value: Double(batches * batchSize) / seconds, unit: "jobs/s", target: 20_000, higherIsBetter: true)
    }

    enum CycleMode: String {
        /// Every write waits for the acknowledgement of the one before.
        case sequential
        /// Same, with a stage-start write before each stage result.
        case withStarts
        /// A job's stage results and finish are sent without waiting for each
        /// other (the writer keeps their order); the job waits for all the
        /// acknowledgements before its worker claims the next.
        case pipelined
    }

    /// 16 workers driven by completion handlers, as the engine is, each:
    /// claim one job, record its 3 stage results, finish it; again, until
    /// the 30,000 jobs are done.
    func claimCycles(_ mode: CycleMode, path: String) async throws -> Figure {
        let store = try SQLiteJobStore(path: path)
        let plan = [StagePlan(name: "a", kind: "then"), StagePlan(name: "b", kind: "map"), StagePlan(name: "c", kind: "done")]
        let jobs = max(1, Int(30 * options.scale)) * 1000
        for batch in 0..<(jobs / 1000) {
            _ = try await store.submit((0..<1000).map { index in
                NewJob(definition: "cycle", input: Data("\(batch * 1000 + index)".utf8), stages: plan)
            })
        }
        let before = store.writerStatistics
        let watch = Stopwatch()
        let (finished, failures) = await withCheckedContinuation { continuation in
            CycleLanes(store: store, mode: mode, lanes: 16, done: continuation).start()
        }
        let seconds = watch.report(operations: jobs, unit: "job")
        let after = store.writerStatistics
        let transactions = after.transactions - before.transactions
        let writes = after.writes - before.writes
        print("  (\(transactions) transactions, \(String(format: "%.1f", Double(writes) / Double(max(transactions, 1)))) writes each)")
        try await store.close()
        guard failures.isEmpty, finished == jobs else {
            throw BenchError("finished \(finished) jobs of \(jobs); failures: \(failures.prefix(3))")
        }
        let name: String
        switch mode {
        case .sequential: name = "claim + 3 stage results + finish, 16 jobs in flight, each write awaited"
        case .withStarts: name = "claim + 3 × (stage start + result) + finish, 16 in flight, each awaited (information)"
        case .pipelined: name = "claim + 3 stage results + finish, 16 in flight, a job's writes pipelined (information)"
        }
        return Figure(
            name: name, value: Double(jobs) / seconds, unit: "jobs/s",
            target: mode == .sequential ? 10_000 : nil, higherIsBetter: true)
    }

    // MARK: Helpers

    /// Runs a throughput measurement `options.runs` times, each on a new
    /// database, and reports the best run with the median beside it: the
    /// machine is shared, and the best run is the one least disturbed.
    func repeated(_ body: (String) async throws -> Figure) async throws -> Figure {
        var runs: [Figure] = []
        for run in 0..<max(1, options.runs) {
            let path = folder + "/run-\(run).sqlite"
            runs.append(try await body(path))
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let values = runs.map(\.value).sorted()
        var best = runs.max { $0.value < $1.value }!
        if runs.count > 1 {
            best.name += String(format: ", best of %d (median %@)", runs.count, Int(values[values.count / 2]).formatted())
        }
        return report(best)
    }

    struct Latencies {
        var sorted: [Double]
        var medianMs: Double { sorted[sorted.count / 2] }
        var p99Ms: Double { sorted[min(sorted.count - 1, sorted.count * 99 / 100)] }
        var p99Text: String { String(format: "%.3f ms", p99Ms) }
    }

    static func latencies(count: Int, _ body: () async throws -> Void) async throws -> Latencies {
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let start = ContinuousClock.now
            try await body()
            samples.append((ContinuousClock.now - start).seconds * 1000)
        }
        return Latencies(sorted: samples.sorted())
    }

    func report(_ figure: Figure) -> Figure {
        let value = figure.unit == "ms"
            ? String(format: "%.3f %@", figure.value, figure.unit)
            : "\(Int(figure.value).formatted()) \(figure.unit)"
        var line = "\(figure.name): \(value)"
        if let target = figure.target {
            let targetText = figure.unit == "ms"
                ? String(format: "≤ %g %@", target, figure.unit)
                : "≥ \(Int(target).formatted()) \(figure.unit)"
            line += "   target \(targetText)   \(figure.met ? "OK" : "MISSED")"
        }
        print(line)
        return figure
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Wall-clock time, and the CPU time this process used meanwhile: on a
/// machine shared with other work, CPU per operation is the steadier figure.
struct Stopwatch {
    let wall = ContinuousClock.now
    let cpu = Stopwatch.cpuSeconds()

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Prints CPU per operation and the share of the wall time the process
    /// was on a CPU; returns the wall seconds.
    func report(operations: Int, unit: String) -> Double {
        let seconds = (ContinuousClock.now - wall).seconds
        let cpuUsed = Stopwatch.cpuSeconds() - cpu
        print(String(format: "  (%.1f µs CPU per %@; %.2f cores busy on average; load average %@)",
                     cpuUsed / Double(operations) * 1e6, unit, cpuUsed / seconds, Stopwatch.loadAverage()))
        return seconds
    }

    static func loadAverage() -> String {
        var loads = [Double](repeating: 0, count: 3)
        let count = getloadavg(&loads, 3)
        return count > 0 ? String(format: "%.2f", loads[0]) : "?"
    }
}
