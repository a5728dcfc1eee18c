import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore {
    public func submit(_ jobs: [NewJob]) async throws -> [Submission] {
        guard !jobs.isEmpty else { return [] }
        try NewJob.check(jobs, cap: cap)
        return try await write(atomic: true) { session in
            var submissions: [Submission] = []
            submissions.reserveCapacity(jobs.count)
            var pools: Set<String> = []
            for job in jobs {
                let submission = try await Self.insert(job, session)
                if submission.created { pools.insert(job.pool) }
                submissions.append(submission)
            }
            // Delivered at commit: idle jobds elsewhere claim now (or, for a
            // delayed job, set their timer from nextRunAt).
            for pool in pools.sorted() { try await session.notify(.runnable(pool: pool)) }
            return submissions
        }
    }

    /// Inserts `job`, or finds the job its idempotency key or schedule
    /// occurrence already names. A concurrent insert of the same key in
    /// another transaction makes this one wait for it, then find its job.
    static func insert(_ job: NewJob, _ session: PostgresSession) async throws -> Submission {
        let input = PostgresStoredValue.split(job.input)
        let scheduledFor = PostgresStoredValue.time(job.scheduledFor)
        let inserted = try await session.firstRow(
            """
            INSERT INTO {s}.jobs (definition, pool, priority, idempotency_key, input, input_bytes, run_at, scheduled_for,
                                  limit_key)
            VALUES ($1, $2, $3, $4::text, $5::text, $6::bytea, coalesce($7::timestamptz, now()), $8::timestamptz, $9::text)
            ON CONFLICT DO NOTHING
            RETURNING id
            """,
            job.definition, job.pool, job.priority, job.idempotencyKey, input.text, input.bytes,
            PostgresStoredValue.runAt(job.runAt), scheduledFor, job.limitKey
        ) { try PostgresIndexedRow($0).int64(0) }
        guard let id = inserted else {
            let existing = try await session.firstRow(
                """
                SELECT id FROM {s}.jobs
                WHERE definition = $1 AND (idempotency_key = $2::text OR scheduled_for = $3::timestamptz)
                ORDER BY idempotency_key = $2::text DESC NULLS LAST
                LIMIT 1
                """,
                job.definition, job.idempotencyKey, scheduledFor
            ) { try PostgresIndexedRow($0).int64(0) }
            guard let existing else {
                throw JobStoreError(
                    .database, "job of \(job.definition) was neither inserted nor found (a conflict on its id?)")
            }
            return Submission(id: existing, created: false)
        }
        if !job.stages.isEmpty {
            try await session.execute(
                """
                INSERT INTO {s}.stages (job_id, position, name, kind)
                SELECT $1, ordinality - 1, name, kind FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS plan(name, kind)
                """,
                id, job.stages.map(\.name), job.stages.map(\.kind))
        }
        if !job.after.isEmpty { try await waitForDependencies(of: id, job, session) }
        return Submission(id: id, created: true)
    }

    /// Job `id` runs after `job.after`: it waits for those not ended yet,
    /// or is cancelled at once when one was rejected or cancelled (unless
    /// it runs after any end). Their rows are read `FOR SHARE`: a finish of
    /// one of them being written now is waited for, so its end is either
    /// seen here or sees this job's dependency rows (`dependenciesEnded`).
    private static func waitForDependencies(of id: Int64, _ job: NewJob, _ session: PostgresSession) async throws {
        let wanted = Array(Set(job.after)).sorted()
        let states = try await session.rows(
            "SELECT id, state FROM {s}.jobs WHERE id = ANY($1) ORDER BY id FOR SHARE", wanted
        ) { row in (try PostgresIndexedRow(row).int64(0), try PostgresIndexedRow(row).text(1) ?? "") }
        let byID = Dictionary(states, uniquingKeysWith: { first, _ in first })
        var open: [Int64] = []
        for after in wanted {
            guard let text = byID[after], let state = JobState(rawValue: text) else {
                throw JobStoreError(
                    .jobNotFound,
                    "cannot submit a job of \(job.definition) to run after job \(after): there is no such job",
                    jobID: after)
            }
            if !state.isResolved {
                open.append(after)
            } else if state != .fulfilled && !job.afterAnyEnd {
                try await session.execute(
                    """
                    UPDATE {s}.jobs SET state = 'cancelled', cancel_requested = true, finished_at = now(), error = $1
                    WHERE id = $2
                    """, JobStoreError.dependencyFailedMessage(after, state), id)
                try await resolveStages(of: id, as: .cancelled, session)
                return
            }
        }
        guard !open.isEmpty else { return }
        try await session.execute(
            """
            INSERT INTO {s}.job_dependencies (job_id, after_id, any_end)
            SELECT $1, after_id, $3 FROM unnest($2::int8[]) AS a(after_id)
            """, id, open, job.afterAnyEnd)
        try await session.execute("UPDATE {s}.jobs SET waiting_on = $1 WHERE id = $2", open.count, id)
    }
}
