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
        return Submission(id: id, created: true)
    }
}
