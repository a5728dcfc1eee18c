import Foundation
internal import PostgresNIO

extension PostgresJobStore {
    /// The fence of a stage write: the job is still running under this lease.
    /// `FOR KEY SHARE` holds the job row until the commit, so a host
    /// rescuing the job (`FOR UPDATE SKIP LOCKED`) passes over it meanwhile
    /// instead of requeueing it under a write.
    private static let leaseHolds = """
        EXISTS (SELECT 1 FROM {s}.jobs
                WHERE id = $1 AND state = 'running' AND lease_owner = $3 AND claims = $4 FOR KEY SHARE)
        """

    public func recordStageStart(_ start: StageStart, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        writer.enqueue(atomic: false, { session in
            let lease = start.lease
            let changed = try await session.execute(
                """
                UPDATE {s}.stages
                SET state = 'running', attempts = $5, started_at = $6::timestamptz, finished_at = NULL,
                    value = NULL, value_bytes = NULL, error = NULL, exit_code = NULL, error_code = NULL
                WHERE job_id = $1 AND position = $2 AND \(Self.leaseHolds)
                RETURNING 1
                """,
                lease.jobID, start.position, lease.owner, lease.claim, start.attempt, PGValue.time(start.at))
            if changed == 0 {
                throw try await Self.fenceError(lease, position: start.position, doing: "record the start of", session)
            }
        }, completion: completion)
    }

    public func recordStageResult(_ result: StageResult, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let cap = self.cap
        writer.enqueue(atomic: false, { session in
            let lease = result.lease
            let stored = try StoredStageResult(result, cap: cap)
            let value = PGValue.split(stored.value)
            let changed = try await session.execute(
                """
                UPDATE {s}.stages
                SET state = $5, value = $6::text, value_bytes = $7::bytea, error = $8::text, exit_code = $9::int,
                    attempts = $10, started_at = coalesce($11::timestamptz, started_at), finished_at = $12::timestamptz,
                    error_code = $13::text
                WHERE job_id = $1 AND position = $2 AND \(Self.leaseHolds)
                RETURNING 1
                """,
                lease.jobID, result.position, lease.owner, lease.claim, stored.state.rawValue, value.text, value.bytes,
                stored.error, result.exitCode.map { Int($0) }, result.attempt, PGValue.time(result.startedAt),
                PGValue.time(result.at), stored.errorCode)
            if changed == 0 {
                throw try await Self.fenceError(lease, position: result.position, doing: "record the result of", session)
            }
        }, completion: completion)
    }

    public func finish(_ finish: JobFinish, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let cap = self.cap
        writer.enqueue(atomic: false, { session in
            let lease = finish.lease
            let stored = try StoredJobFinish(finish, cap: cap)
            let result = PGValue.split(stored.result)
            let changed = try await session.execute(
                """
                UPDATE {s}.jobs
                SET state = $4, result = $5::text, result_bytes = $6::bytea, error = $7::text,
                    finished_at = $8::timestamptz, lease_expires_at = NULL
                WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND claims = $3
                RETURNING 1
                """,
                lease.jobID, lease.owner, lease.claim, stored.state.rawValue, result.text, result.bytes, stored.error,
                PGValue.time(finish.at))
            if changed == 0 {
                throw try await Self.fenceError(lease, position: nil, doing: "finish", session)
            }
            try await Self.resolveStages(of: lease.jobID, as: stored.state, session)
        }, completion: completion)
    }

    public func recordEvent(_ event: NewEvent, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let cap = self.cap
        writer.enqueue(atomic: false, { session in
            try StoredValue.check(event.message, "the message of a \(event.kind) event", cap: cap, jobID: event.jobID)
            if try await Self.insertEvent(event, session) == 0, let jobID = event.jobID {
                throw JobStoreError(.jobNotFound, "cannot record a \(event.kind) event: there is no job \(jobID)", jobID: jobID)
            }
        }, completion: completion)
    }

    /// Inserts `event` unless it names a job that does not exist; returns how many rows it inserted.
    @discardableResult
    static func insertEvent(_ event: NewEvent, _ session: PGSession) async throws -> Int {
        try await session.execute(
            """
            INSERT INTO {s}.events (job_id, position, kind, message, created_at)
            SELECT $1::int8, $2::int, $3, $4, $5::timestamptz
            WHERE $1::int8 IS NULL OR EXISTS (SELECT 1 FROM {s}.jobs WHERE id = $1::int8)
            RETURNING 1
            """,
            event.jobID, event.position, event.kind, event.message, PGValue.time(event.at))
    }

    /// A resolved job has no pending or running stage: the ones never
    /// reached are skipped, and one cut short is rejected.
    static func resolveStages(of jobID: Int64, as state: JobState, _ session: PGSession) async throws {
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
    static func fenceError(_ lease: Lease, position: Int?, doing what: String, _ session: PGSession) async throws -> JobStoreError {
        let job = try await session.firstRow("SELECT state, lease_owner, claims FROM {s}.jobs WHERE id = $1", lease.jobID) { row in
            let row = PGRow(row)
            return (state: try row.text(0) ?? "", owner: try row.text(1), claims: try row.int(2))
        }
        if let error = JobStoreError.fence(lease, position: position, doing: what, job: job) { return error }
        let count = try await session.firstRow("SELECT count(*) FROM {s}.stages WHERE job_id = $1", lease.jobID) {
            try PGRow($0).int(0)
        } ?? 0
        return JobStoreError.noSuchStage(lease, position: position, doing: what, count: count)
    }
}
