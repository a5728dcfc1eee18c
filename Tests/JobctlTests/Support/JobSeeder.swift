import Foundation
import JobStore
import JobStoreSQLite

/// Puts jobs in a chosen state straight through the store, as an engine
/// would leave them, without running anything.
struct JobSeeder {
    let store: SQLiteJobStore
    static let owner = "jobd-test-seeder"
    static let stages = [
        StagePlan(name: "fetch", kind: "then"), StagePlan(name: "total", kind: "map"),
        StagePlan(name: "publish", kind: "done"),
    ]

    /// A job of `definition` left in `state`; fulfilled jobs get a value
    /// per stage, rejected ones fail at `total` with exit status 3.
    @discardableResult
    func job(
        _ state: JobState, definition: String = "hello", input: String = "in", result: String = "out",
        error: String = "exit status 3: bad total"
    ) async throws -> Int64 {
        // A pool of its own, so the claim below takes this job and no other.
        let pool = "seed-\(UUID().uuidString)"
        let id = try await store.submit(
            NewJob(
                definition: definition, pool: pool, input: Data(input.utf8),
                stages: Self.stages)
        ).id
        if state == .pending { return id }
        if state == .cancelled {
            _ = try await store.requestCancellation(of: id)
            return id
        }
        let claimed = try await store.claim(pool: pool, owner: Self.owner, limit: 1, leaseDuration: .seconds(60))
        let lease = claimed[0].lease
        // Every stage took exactly 1.5 s, however long these writes take
        // on a loaded machine (tests compare the TOOK column's width).
        let ended = Date()
        let began = ended.addingTimeInterval(-1.5)
        try await store.recordStageResult(
            StageResult(
                lease: lease, position: 0, outcome: .fulfilled(Data("fetched \(id)".utf8)),
                exitCode: 0, startedAt: began, at: ended))
        switch state {
        case .running:
            try await store.recordStageStart(StageStart(lease: lease, position: 1, attempt: 2))
        case .fulfilled:
            try await store.recordStageResult(
                StageResult(
                    lease: lease, position: 1, outcome: .fulfilled(Data("42\n".utf8)),
                    startedAt: began, at: ended))
            try await store.recordStageResult(
                StageResult(
                    lease: lease, position: 2, outcome: .fulfilled(Data(result.utf8)),
                    exitCode: 0, startedAt: began, at: ended))
            try await store.finish(JobFinish(lease: lease, outcome: .fulfilled(Data(result.utf8))))
        case .rejected:
            try await store.recordStageResult(
                StageResult(
                    lease: lease, position: 1, outcome: .rejected(error),
                    exitCode: 3, attempt: 2, startedAt: began, at: ended))
            try await store.finish(JobFinish(lease: lease, outcome: .rejected(error)))
        case .pending, .cancelled:
            break
        }
        return id
    }
}
