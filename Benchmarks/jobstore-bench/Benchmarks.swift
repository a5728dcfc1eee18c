import BenchmarkSupport
import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import StoreCycle
import Synchronization

/// The store's figures, each beside its bound (Thresholds.swift).
struct Benchmarks {
    struct Options {
        /// Where to build (or find, and keep) the big database.
        var bigDatabasePath: String?
        /// Jobs in the big database.
        var bigJobs = 1_000_000
        var skipBig = false
        /// Run only these: writes, submit, cycle, reads.
        var only: Set<String> = []
        /// Fewer jobs, for profiling (1 = the figures' sizes).
        var scale = 1.0
        /// Runs of each throughput figure.
        var runs = 3
    }

    let options: Options
    let folder: String

    init(options: Options) {
        self.options = options
        folder = NSTemporaryDirectory() + "jobstore-bench-\(getpid())"
    }

    func run(into report: inout Report) async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        print("jobstore-bench: \(Machine.summary); databases in \(folder)")
        func wanted(_ name: String) -> Bool { options.only.isEmpty || options.only.contains(name) }
        if wanted("writes") {
            let runs = try await repeated { try await groupCommitWrites(path: $0) }
            add(
                runs, to: &report, name: "stage-result writes, group commit, 256 jobs at once", unit: "writes/s",
                issueTarget: "≥ 50,000", cpuBound: Thresholds.cpuPerStageWrite)
        }
        if wanted("submit") {
            let runs = try await repeated { try await batchSubmit(path: $0) }
            add(
                runs, to: &report, name: "batch submit, 1,000 jobs × 3 stages a batch", unit: "jobs/s",
                issueTarget: "≥ 20,000", cpuBound: Thresholds.cpuPerSubmittedJob)
        }
        if wanted("cycle") {
            for mode in [CycleMode.sequential, .withStarts, .pipelined] {
                let runs = try await repeated { try await claimCycles(mode, path: $0) }
                add(
                    runs, to: &report, name: Self.cycleNames[mode]!, unit: "jobs/s",
                    issueTarget: mode == .sequential ? "≥ 10,000" : nil,
                    cpuBound: mode == .sequential ? Thresholds.cpuPerCycle : nil)
            }
            try await limitedCycles(into: &report)
        }
        if wanted("reads") && !options.skipBig {
            try await reads(jobs: 10_000, path: folder + "/small.sqlite", into: &report)
            let big = options.bigDatabasePath ?? folder + "/big.sqlite"
            try await reads(jobs: options.bigJobs, path: big, into: &report)
        }
    }

    // MARK: Figures

    /// One run of a throughput figure: operations, wall and CPU seconds.
    struct Run {
        var operations: Int
        var seconds: Double
        var cpuSeconds: Double
        var rate: Double { Double(operations) / seconds }
        var cpuMicroseconds: Double { cpuSeconds / Double(operations) * 1e6 }
    }

    /// Stage results from 256 jobs at once, each job writing its 50 stages
    /// one after the other, every write waiting for its acknowledgement.
    func groupCommitWrites(path: String) async throws -> Run {
        let store = try SQLiteJobStore(path: path)
        let stages = (0..<50).map { StagePlan(name: "s\($0)", kind: "then") }
        for _ in 0..<max(1, Int(8 * options.scale)) {
            _ = try await store.submit((0..<500).map { _ in NewJob(definition: "w", stages: stages) })
        }
        var claimed: [ClaimedJob] = []
        while true {
            let batch = try await store.claim(
                pool: "default", owner: "bench", limit: 1000, leaseDuration: .seconds(3600))
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
                    if lanesLeft.withLock({
                        $0 -= 1
                        return $0
                    }) == 0 {
                        done.resume()
                    }
                    return
                }
                let job = jobs[jobIndex]
                let result = StageResult(
                    lease: job.lease, position: position,
                    outcome: .fulfilled(Data("value \(jobIndex)/\(position)\n".utf8)))
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
        let run = Run(operations: total, seconds: watch.elapsedSeconds, cpuSeconds: watch.cpuSeconds)
        Self.printWriter(store.writerStatistics)
        try await store.close()
        let failed = failures.withLock { $0 }
        guard failed == 0 else { throw BenchError("\(failed) stage-result writes failed") }
        return run
    }

    /// 100 batches of 1,000 jobs with 3 stages each, one transaction per batch.
    func batchSubmit(path: String) async throws -> Run {
        let store = try SQLiteJobStore(path: path)
        let plan = [
            StagePlan(name: "fetch", kind: "then"), StagePlan(name: "total", kind: "map"),
            StagePlan(name: "publish", kind: "done"),
        ]
        let batches = max(1, Int(100 * options.scale))
        let batchSize = 1000
        let watch = Stopwatch()
        for batch in 0..<batches {
            _ = try await store.submit(
                (0..<batchSize).map { index in
                    NewJob(definition: "report", input: Data("line \(batch * batchSize + index)".utf8), stages: plan)
                })
        }
        let run = Run(operations: batches * batchSize, seconds: watch.elapsedSeconds, cpuSeconds: watch.cpuSeconds)
        try await store.close()
        return run
    }

    static let cycleNames: [CycleMode: String] = [
        .sequential: "claim + 3 stage results + finish, 16 in flight, each write awaited",
        .withStarts: "same with a stage start before each result",
        .pipelined: "same with a job's writes pipelined",
    ]

    /// 16 workers driven by completion handlers, as the engine is, each:
    /// claim one job, record its 3 stage results, finish it; again, until
    /// the 30,000 jobs are done.
    func claimCycles(_ mode: CycleMode, path: String, flow: ClaimFlow = .unlimited) async throws -> Run {
        let store = try SQLiteJobStore(path: path)
        let outcome = try await ClaimCycles.run(
            store, jobs: max(1, Int(30 * options.scale)) * 1000, mode: mode, flow: flow)
        Self.printWriter((outcome.transactions, outcome.writes))
        try await store.close()
        return Run(operations: outcome.jobs, seconds: outcome.seconds, cpuSeconds: outcome.cpuSeconds)
    }

    /// The sequential cycle with concurrency limits that never bind (a
    /// global one and one per key over 100 keys, far above the 16 workers),
    /// and with a rate per key that never binds (each claim counts its
    /// key's starts of the last second and writes one), each as a share of
    /// the same cycle without, the three alternating run by run: what
    /// counting the slots, and the starts, in each claim costs.
    func limitedCycles(into report: inout Report) async throws {
        let flow = ClaimFlow(limits: ["cycle": ConcurrencyLimit(global: 10_000, perKey: 1_000)])
        let rated = ClaimFlow(rates: ["cycle": StartRate(count: 1_000_000, window: .seconds(1), perKey: true)])
        var plain: [Run] = []
        var limited: [Run] = []
        var ratedRuns: [Run] = []
        for _ in 0..<max(1, options.runs) {
            plain += try await repeated(times: 1) { try await claimCycles(.sequential, path: $0) }
            limited += try await repeated(times: 1) { try await claimCycles(.sequential, path: $0, flow: flow) }
            ratedRuns += try await repeated(times: 1) { try await claimCycles(.sequential, path: $0, flow: rated) }
        }
        let share = median(limited.map(\.rate)) / median(plain.map(\.rate)) * 100
        report.add(
            "claim cycle with limits (global, per key; not binding) ÷ without", share, unit: "%",
            .atLeast(Thresholds.limitedCycleShare),
            note: "medians of \(limited.count) alternating runs: \(Report.format(median(limited.map(\.rate)), 0)) "
                + "vs \(Report.format(median(plain.map(\.rate)), 0)) jobs/s", digits: 0)
        let rateShare = median(ratedRuns.map(\.rate)) / median(plain.map(\.rate)) * 100
        report.add(
            "claim cycle with a rate (per key, 1,000,000/1s; not binding) ÷ without", rateShare, unit: "%",
            .atLeast(Thresholds.ratedCycleShare),
            note: "medians of \(ratedRuns.count) alternating runs: "
                + "\(Report.format(median(ratedRuns.map(\.rate)), 0)) jobs/s", digits: 0)
    }

    // MARK: Helpers

    /// Runs a throughput measurement `options.runs` times, each on a new
    /// database.
    func repeated(times: Int? = nil, _ body: (String) async throws -> Run) async throws -> [Run] {
        var runs: [Run] = []
        for run in 0..<max(1, times ?? options.runs) {
            let path = folder + "/run-\(run).sqlite"
            runs.append(try await body(path))
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        return runs
    }

    /// The best run's rate (the one least disturbed on a shared machine),
    /// beside the issue's wall-clock target for context, and the median
    /// CPU time per operation, held to `cpuBound` (Thresholds.swift says why).
    func add(
        _ runs: [Run], to report: inout Report, name: String, unit: String, issueTarget: String?, cpuBound: Double?
    ) {
        let rates = runs.map(\.rate)
        var note = runs.count > 1 ? "best of \(runs.count), median \(Report.format(median(rates), 0))" : ""
        if let issueTarget { note += (note.isEmpty ? "" : "; ") + "target: \(issueTarget) on an idle machine" }
        report.add(name, rates.max()!, unit: unit, note: note, digits: 0)
        let operation = unit.split(separator: "/").first.map(String.init) ?? unit
        report.add(
            "  CPU time per \(operation.hasSuffix("s") ? String(operation.dropLast()) : operation) (all threads)",
            median(runs.map(\.cpuMicroseconds)), unit: "µs", cpuBound.map { .atMost($0) } ?? .none)
    }

    static func printWriter(_ statistics: (transactions: Int, writes: Int)) {
        let each = Double(statistics.writes) / Double(max(statistics.transactions, 1))
        print("  (\(statistics.transactions) transactions, \(Report.format(each, 1)) writes each)")
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
