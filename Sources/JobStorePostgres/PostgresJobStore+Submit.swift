import Foundation
import JobStore
import JobValues
internal import PostgresNIO

extension PostgresJobStore {
    public func submit(_ jobs: [NewJob]) async throws -> [Submission] {
        guard !jobs.isEmpty else { return [] }
        try NewJob.check(jobs, cap: cap)
        // Unique keys are locked in one order (below); a deadlock left to
        // the server to break (keys and --key names in one batch) makes the
        // submit again from the start.
        let attempts = jobs.contains { $0.unique != nil } ? 3 : 1
        var attempt = 1
        while true {
            do {
                return try await submitOnce(jobs)
            } catch let error as JobStoreError where error.code == .busy && attempt < attempts {
                attempt += 1
            }
        }
    }

    private func submitOnce(_ jobs: [NewJob]) async throws -> [Submission] {
        try await write(atomic: true) { session in
            // Submits of one unique key take turns, whole transaction by
            // whole transaction, under a lock on the key taken before any
            // other: batches taking keys in every order, as they come, can
            // neither deadlock nor both insert a key.
            let keys = Set(
                jobs.compactMap { job in
                    job.unique.map { "jobd.unique.\(session.schema).\(job.definition).\($0.key)" }
                }
            ).sorted()
            if !keys.isEmpty {
                try await session.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k", keys)
            }
            var submissions: [Submission] = []
            submissions.reserveCapacity(jobs.count)
            var pools: Set<String> = []
            for job in jobs {
                let submission = try await Self.insert(job, session)
                if submission.created || (submission.duplicate && job.unique?.onConflict == .reschedule) {
                    pools.insert(job.pool)
                }
                submissions.append(submission)
            }
            // Delivered at commit: idle jobds elsewhere claim now (or, for a
            // delayed job, set their timer from nextRunAt).
            for pool in pools.sorted() { try await session.notify(.runnable(pool: pool)) }
            return submissions
        }
    }

    /// Inserts `job`, or finds the job its idempotency key, schedule
    /// occurrence or unique key already names. A concurrent insert of the
    /// same key in another transaction makes this one wait for it, then
    /// find its job.
    static func insert(_ job: NewJob, _ session: PostgresSession) async throws -> Submission {
        let input = PostgresStoredValue.split(job.input)
        let scheduledFor = PostgresStoredValue.time(job.scheduledFor)
        // A job found holding the key, or whose insert conflicted, may end
        // (and free it) before it is read: then the insert is made again.
        for _ in 0..<3 {
            if let unique = job.unique, let holder = try await uniqueHolder(of: job, unique, session) {
                return Submission(id: holder, created: false, duplicate: true)
            }
            let inserted = try await session.firstRow(
                """
                INSERT INTO {s}.jobs (definition, pool, priority, idempotency_key, input, input_bytes, run_at,
                                      scheduled_for, limit_key, unique_key, unique_until, unique_while_running)
                VALUES ($1, $2, $3, $4::text, $5::text, $6::bytea, coalesce($7::timestamptz, now()), $8::timestamptz,
                        $9::text, $10::text, now() + $11::float8 * interval '1 millisecond', $12)
                ON CONFLICT DO NOTHING
                RETURNING id
                """,
                job.definition, job.pool, job.priority, job.idempotencyKey, input.text, input.bytes,
                PostgresStoredValue.runAt(job.runAt), scheduledFor, job.limitKey, job.unique?.key,
                job.unique?.period.map { $0.timeInterval * 1000 }, job.unique?.whileRunning ?? false
            ) { try PostgresIndexedRow($0).int64(0) }
            if let id = inserted {
                try await insertStages(of: id, job, session)
                return Submission(id: id, created: true)
            }
            if job.idempotencyKey != nil || scheduledFor != nil {
                let existing = try await session.firstRow(
                    """
                    SELECT id FROM {s}.jobs
                    WHERE definition = $1 AND (idempotency_key = $2::text OR scheduled_for = $3::timestamptz)
                    ORDER BY idempotency_key = $2::text DESC NULLS LAST
                    LIMIT 1
                    """,
                    job.definition, job.idempotencyKey, scheduledFor
                ) { try PostgresIndexedRow($0).int64(0) }
                if let existing { return Submission(id: existing, created: false) }
            }
            if job.unique == nil { break }
        }
        throw JobStoreError(
            .database, "job of \(job.definition) was neither inserted nor found (a conflict on its id?)")
    }

    private static func insertStages(of id: Int64, _ job: NewJob, _ session: PostgresSession) async throws {
        if !job.stages.isEmpty {
            try await session.execute(
                """
                INSERT INTO {s}.stages (job_id, position, name, kind)
                SELECT $1, ordinality - 1, name, kind FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS plan(name, kind)
                """,
                id, job.stages.map(\.name), job.stages.map(\.kind))
        }
        if !job.after.isEmpty { try await waitForDependencies(of: id, job, session) }
    }

    /// The job that holds `unique.key` of `job`'s definition, after
    /// applying `unique.onConflict` to it; `nil` when none does, the key
    /// then released by a job that no longer holds it (its period over,
    /// and ended, or running under an expired lease — such a job is marked
    /// for cancelling, so that it ends instead of running again beside
    /// the new one when its lease is next looked at). The holder's row is
    /// locked: submits of one key take turns from here to their commit.
    private static func uniqueHolder(
        of job: NewJob, _ unique: UniqueKey, _ session: PostgresSession
    ) async throws -> Int64? {
        let found = try await session.firstRow(
            """
            SELECT id, state, coalesce(unique_until > now(), false), coalesce(lease_expires_at > now(), false),
                   unique_while_running
            FROM {s}.jobs WHERE definition = $1 AND unique_key = $2::text
            FOR UPDATE
            """, job.definition, unique.key
        ) { row in
            let row = PostgresIndexedRow(row)
            return (
                id: try row.int64(0), state: JobState(rawValue: try row.text(1) ?? ""), inPeriod: try row.bool(2),
                liveLease: try row.bool(3), whileRunning: try row.bool(4)
            )
        }
        guard let holder = found else { return nil }
        let runningHolds = holder.state == .running && holder.whileRunning
        guard holder.state == .pending || (runningHolds && holder.liveLease) || holder.inPeriod else {
            try await session.execute(
                "UPDATE {s}.jobs SET unique_key = NULL, cancel_requested = cancel_requested OR $2 WHERE id = $1",
                holder.id, runningHolds)
            if runningHolds { _ = try await insertEvent(.uniqueKeyTaken(holder.id), session) }
            return nil
        }
        guard holder.state == .pending else { return holder.id }
        switch unique.onConflict {
        case .skip: break
        case .replaceInput:
            let input = PostgresStoredValue.split(job.input)
            try await session.execute(
                "UPDATE {s}.jobs SET input = $2::text, input_bytes = $3::bytea, limit_key = $4::text WHERE id = $1",
                holder.id, input.text, input.bytes, job.limitKey)
        case .reschedule:
            try await session.execute(
                "UPDATE {s}.jobs SET run_at = coalesce($2::timestamptz, now()) WHERE id = $1", holder.id,
                PostgresStoredValue.runAt(job.runAt))
        }
        return holder.id
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
