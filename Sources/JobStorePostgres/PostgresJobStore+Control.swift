import Foundation
import JobStore
import JobValues
internal import PostgresNIO

extension PostgresJobStore {
    public func requestCancellation(of id: Int64) async throws -> CancellationOutcome {
        try await write(atomic: true) { session in
            let stateText = try await session.firstRow("SELECT state FROM {s}.jobs WHERE id = $1 FOR UPDATE", id) {
                try PostgresIndexedRow($0).text(0)
            }
            guard let stateText, let state = stateText.flatMap(JobState.init(rawValue:)) else {
                throw JobStoreError(.jobNotFound, "cannot cancel job \(id): there is no such job", jobID: id)
            }
            switch state {
            case .pending:
                try await session.execute(
                    """
                    UPDATE {s}.jobs SET state = 'cancelled', cancel_requested = true, finished_at = now(),
                        error = 'cancelled before it started'
                    WHERE id = $1
                    """, id)
                try await Self.resolveStages(of: id, as: .cancelled, session)
                // A waiting parent's children go with it; a child's end counts toward its parent's join.
                try await Self.cancelChildren(of: id, stage: nil, reason: JobStoreError.parentEndedMessage(id), session)
                try await Self.childrenEnded([(id, .cancelled)], session)
                try await Self.dependenciesEnded([(id, .cancelled)], session)
                return .cancelled
            case .running:
                try await session.execute("UPDATE {s}.jobs SET cancel_requested = true WHERE id = $1", id)
                // The host running it hears this at commit and stops the job at once.
                try await session.notify(.cancellationRequested(jobID: id))
                return .requested
            case .fulfilled, .rejected, .cancelled:
                return .alreadyResolved(state)
            }
        }
    }

    public func retry(_ id: Int64, delay: Duration) async throws -> Job {
        try await write(atomic: true) { session in
            guard
                let job = try await session.firstRow(
                    "SELECT \(PostgresQueryColumns.job) FROM {s}.jobs WHERE id = $1 FOR UPDATE", id,
                    decode: PostgresQueryColumns.job)
            else {
                throw JobStoreError(.jobNotFound, "cannot retry job \(id): there is no such job", jobID: id)
            }
            guard job.state.isResolved else { throw JobStoreError.cannotRetry(id, job.state) }
            // Keep the attempt as it was, then start afresh.
            try await session.execute(
                """
                INSERT INTO {s}.job_attempts (job_id, attempt, state, result, result_bytes, error, started_at, finished_at)
                SELECT id, attempt, state, result, result_bytes, error, started_at, finished_at FROM {s}.jobs WHERE id = $1
                """, id)
            try await session.execute(
                """
                INSERT INTO {s}.stage_attempts (job_id, attempt, position, name, kind, state, value, value_bytes, error,
                                                exit_code, attempts, started_at, finished_at, error_code)
                SELECT job_id, $1, position, name, kind, state, value, value_bytes, error, exit_code, attempts,
                       started_at, finished_at, error_code
                FROM {s}.stages WHERE job_id = $2
                """, job.attempt, id)
            try await session.execute(
                """
                UPDATE {s}.stages SET state = 'pending', value = NULL, value_bytes = NULL, error = NULL, exit_code = NULL,
                    error_code = NULL, attempts = 0, started_at = NULL, finished_at = NULL
                WHERE job_id = $1
                """, id)
            guard
                let updated = try await session.firstRow(
                    """
                    UPDATE {s}.jobs SET state = 'pending', attempt = attempt + 1, result = NULL, result_bytes = NULL,
                        error = NULL, cancel_requested = false, lease_owner = NULL, lease_expires_at = NULL,
                        run_at = now() + $1::float8 * interval '1 millisecond', started_at = NULL, finished_at = NULL
                    WHERE id = $2
                    RETURNING \(PostgresQueryColumns.job)
                    """, Double(delay.milliseconds), id, decode: PostgresQueryColumns.job)
            else {
                throw JobStoreError(.database, "job \(id) vanished while being retried", jobID: id)
            }
            try await session.notify(.runnable(pool: updated.pool))
            return updated
        }
    }

    public func prune(finishedBefore date: Date) async throws -> Int {
        let cutoff = PostgresStoredValue.time(date)
        var total = 0
        // Small transactions, so that other writers are not held up long;
        // stages, history and events go with their job (ON DELETE CASCADE).
        while true {
            let deleted = try await write(atomic: false) { session in
                try await session.execute(
                    """
                    WITH doomed AS (
                        SELECT id AS doomed_id FROM {s}.jobs
                        WHERE finished_at < $1::timestamptz AND state IN ('fulfilled', 'rejected', 'cancelled')
                        LIMIT 500
                        FOR UPDATE SKIP LOCKED)
                    DELETE FROM {s}.jobs USING doomed WHERE id = doomed_id
                    RETURNING 1
                    """, cutoff)
            }
            total += deleted
            if deleted < 500 { return total }
        }
    }

    // MARK: Leadership

    public func acquireLeadership(of role: String, owner: String, for duration: Duration) async throws -> Bool {
        try JobStoreError.checkLeadership(role: role, owner: owner, duration: duration)
        // Outside the writer's queue, as a lease renewal: a write held up by
        // a locked row does not hold the leader lease up with it.
        return try await read(doing: "take the \(role) leader lease", silence: Self.silence(renewing: duration)) {
            session in
            // Taken when free, expired, or already ours (then renewed), by the server's clock.
            let holder = try await session.firstRow(
                """
                INSERT INTO {s}.leaders AS held (role, owner, expires_at, acquired_at)
                VALUES ($1, $2, now() + $3::float8 * interval '1 millisecond', now())
                ON CONFLICT (role) DO UPDATE
                SET owner = excluded.owner, expires_at = excluded.expires_at,
                    acquired_at = CASE WHEN held.owner = excluded.owner THEN held.acquired_at ELSE excluded.acquired_at END
                WHERE held.owner = excluded.owner OR held.expires_at < now()
                RETURNING owner
                """, role, owner, Double(duration.milliseconds)
            ) { try PostgresIndexedRow($0).text(0) }
            return holder == owner
        }
    }

    public func releaseLeadership(of role: String, owner: String) async throws {
        _ = try await read(doing: "let the \(role) leader lease go") { session in
            try await session.execute("DELETE FROM {s}.leaders WHERE role = $1 AND owner = $2", role, owner)
        }
    }
}
