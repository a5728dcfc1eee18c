import BenchmarkSupport
import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite

/// The store driven as the engine drives it, with no engine: workers that
/// claim one job, record its 3 stage results and finish it, again until
/// every job is done. jobstore-bench reports it; engine-bench divides its
/// in-process rate by it (the same writes, without promise chains).
public enum ClaimCycles {
    public struct Outcome: Sendable {
        public var jobs: Int
        public var seconds: Double
        public var cpuSeconds: Double
        /// Of the store's writer, during the cycles.
        public var transactions: Int
        public var writes: Int

        public var jobsPerSecond: Double { Double(jobs) / seconds }
    }

    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Submits `jobs` jobs of 3 stages to `store` (rounded up to a multiple
    /// of 1,000), then runs them with `lanes` workers. With `flow`, the jobs
    /// of `cycle` have 100 limit keys, and each claim honours its limits.
    public static func run(
        _ store: SQLiteJobStore, jobs: Int, mode: CycleMode, lanes: Int = 16, flow: ClaimFlow = .unlimited
    ) async throws -> Outcome {
        let plan = [
            StagePlan(name: "a", kind: "then"), StagePlan(name: "b", kind: "map"), StagePlan(name: "c", kind: "done"),
        ]
        let batches = max(1, (jobs + 999) / 1000)
        for batch in 0..<batches {
            _ = try await store.submit(
                (0..<1000).map { index in
                    var job = NewJob(definition: "cycle", input: Data("\(batch * 1000 + index)".utf8), stages: plan)
                    if !flow.isUnlimited { job.limitKey = "customer-\(index % 100)" }
                    return job
                })
        }
        let before = store.writerStatistics
        let watch = Stopwatch()
        let (finished, failures) = await withCheckedContinuation { continuation in
            CycleLanes(store: store, mode: mode, lanes: lanes, flow: flow, done: continuation).start()
        }
        let outcome = Outcome(
            jobs: batches * 1000, seconds: watch.elapsedSeconds, cpuSeconds: watch.cpuSeconds,
            transactions: store.writerStatistics.transactions - before.transactions,
            writes: store.writerStatistics.writes - before.writes)
        guard failures.isEmpty, finished == outcome.jobs else {
            throw Failed(description: "finished \(finished) jobs of \(outcome.jobs); failures: \(failures.prefix(3))")
        }
        return outcome
    }
}
