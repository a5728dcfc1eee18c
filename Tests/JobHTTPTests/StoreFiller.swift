import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import TestSupport

/// Puts jobs in a store the way an engine does: submit, claim, record each
/// stage's start and result, finish.
struct StoreFiller {
    let store: SQLiteJobStore

    struct StageRun {
        var name: String
        var kind: String = "then"
        var outcome: StageOutcome
        var seconds: Double = 0.2
        var attempts: Int = 1
    }

    /// Runs one job to its end (or leaves it running when `finish` is nil);
    /// stage times are laid out from `start`, one after the other.
    @discardableResult
    func run(
        _ definition: String, input: Data? = nil, pool: String = "default", stages: [StageRun], finish: JobOutcome?,
        start: Date = Date()
    ) async throws -> Int64 {
        let plans = stages.map { StagePlan(name: $0.name, kind: $0.kind) }
        let id = try await store.submit(NewJob(definition: definition, pool: pool, input: input, stages: plans)).id
        let claimed = try await store.claim(pool: pool, owner: "web-1", limit: 1, leaseDuration: .seconds(600))
        guard let lease = claimed.first?.lease, lease.jobID == id else {
            throw TestFailure("claimed \(claimed.map(\.job.id)), not job \(id): leave no other job pending")
        }
        var clock = start
        for (position, stage) in stages.enumerated() {
            let end = clock.addingTimeInterval(stage.seconds)
            let skipped = stage.outcome == .skipped
            if !skipped {
                try await store.recordStageStart(
                    StageStart(lease: lease, position: position, attempt: stage.attempts, at: clock))
            }
            // A job left running keeps its last stage running.
            if finish != nil || position < stages.count - 1 {
                let exitCode: Int32? =
                    switch stage.outcome {
                    case .fulfilled: stage.kind == "map" ? nil : 0
                    case .rejected: 1
                    case .skipped: nil
                    }
                try await store.recordStageResult(
                    StageResult(
                        lease: lease, position: position, outcome: stage.outcome, exitCode: exitCode,
                        attempt: skipped ? 0 : stage.attempts, startedAt: skipped ? nil : clock, at: end))
            }
            clock = end
        }
        if let finish {
            try await store.finish(JobFinish(lease: lease, outcome: finish, at: clock))
        }
        return id
    }

    /// Moves a job's times back by `seconds` (created, run, started,
    /// finished, its stages'), as if it ran that long ago.
    func backdate(_ id: Int64, by seconds: Double) async throws {
        func shift(_ column: String) -> String {
            "\(column) = strftime('%Y-%m-%dT%H:%M:%fZ', \(column), '-\(seconds) seconds')"
        }
        try await store.executeInWriteTransaction(
            """
            UPDATE jobs SET \(["created_at", "run_at", "started_at", "finished_at"].map(shift).joined(separator: ", ")) WHERE id = \(id);
            UPDATE stages SET \(shift("started_at")), \(shift("finished_at")) WHERE job_id = \(id);
            UPDATE job_attempts SET \(shift("started_at")), \(shift("finished_at")) WHERE job_id = \(id);
            UPDATE stage_attempts SET \(shift("started_at")), \(shift("finished_at")) WHERE job_id = \(id);
            """)
    }
}
