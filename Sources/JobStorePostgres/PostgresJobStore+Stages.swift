import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore {
    // Stage starts, stage results and finishes are merged with the others
    // of their kind in their transaction: see `PostgresBatch.swift`.

    public func recordStageStart(_ start: StageStart, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    {
        writer.enqueue(.start(start), completion: completion)
    }

    public func recordStageResult(
        _ result: StageResult, completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        do {
            writer.enqueue(.result(result, try StoredStageResult(result, cap: cap)), completion: completion)
        } catch {
            refuse(error, completion: completion)
        }
    }

    public func finish(_ finish: JobFinish, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        do {
            writer.enqueue(.finish(finish, try StoredJobFinish(finish, cap: cap)), completion: completion)
        } catch {
            refuse(error, completion: completion)
        }
    }

    /// Fails a write in its turn among the others (completions come in call order).
    private func refuse(_ error: any Error, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        writer.enqueue(atomic: false, { _ -> Void in throw error }, completion: completion)
    }

    public func recordEvent(_ event: NewEvent, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let cap = self.cap
        writer.enqueue(
            atomic: false,
            { session in
                try StoredValue.check(
                    event.message, "the message of a \(event.kind) event", cap: cap, jobID: event.jobID)
                if try await Self.insertEvent(event, session) == 0, let jobID = event.jobID {
                    throw JobStoreError(
                        .jobNotFound, "cannot record a \(event.kind) event: there is no job \(jobID)", jobID: jobID)
                }
            }, completion: completion)
    }

    /// Inserts `event` unless it names a job that does not exist; returns how many rows it inserted.
    @discardableResult
    static func insertEvent(_ event: NewEvent, _ session: PostgresSession) async throws -> Int {
        try await session.execute(
            """
            INSERT INTO {s}.events (job_id, position, kind, message, created_at)
            SELECT $1::int8, $2::int, $3, $4, $5::timestamptz
            WHERE $1::int8 IS NULL OR EXISTS (SELECT 1 FROM {s}.jobs WHERE id = $1::int8)
            RETURNING 1
            """,
            event.jobID, event.position, event.kind, event.message, PostgresStoredValue.time(event.at))
    }

    /// A resolved job has no pending or running stage: the ones never
    /// reached are skipped, and one cut short is rejected.
    static func resolveStages(of jobID: Int64, as state: JobState, _ session: PostgresSession) async throws {
        try await session.execute(
            """
            UPDATE {s}.stages
            SET state = CASE state WHEN 'pending' THEN 'skipped' ELSE 'rejected' END,
                error = CASE state WHEN 'running' THEN $1 ELSE error END,
                error_code = CASE state WHEN 'running' THEN 'interrupted' ELSE error_code END
            WHERE job_id = $2 AND state IN ('pending', 'running')
            """,
            JobStoreError.interruptedMessage(state), jobID)
    }

    /// Why a fenced write changed nothing.
    static func fenceError(
        _ lease: Lease, position: Int?, doing what: String, _ session: PostgresSession
    ) async throws -> JobStoreError {
        let job = try await session.firstRow(
            "SELECT state, lease_owner, claims FROM {s}.jobs WHERE id = $1", lease.jobID
        ) { row in
            let row = PostgresIndexedRow(row)
            return (state: try row.text(0) ?? "", owner: try row.text(1), claims: try row.int(2))
        }
        if let error = JobStoreError.fence(lease, position: position, doing: what, job: job) { return error }
        let count =
            try await session.firstRow("SELECT count(*) FROM {s}.stages WHERE job_id = $1", lease.jobID) {
                try PostgresIndexedRow($0).int(0)
            } ?? 0
        return JobStoreError.noSuchStage(lease, position: position, doing: what, count: count)
    }
}
