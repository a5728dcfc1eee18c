import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore {
    public func joinChildren(
        _ join: ChildJoin, completion: @escaping @Sendable (Result<ChildJoinOutcome, any Error>) -> Void
    ) {
        let cap = self.cap
        writer.enqueue(
            atomic: true,
            { session in
                try NewJob.check(join.children, cap: cap)
                return try await Self.join(join, session)
            }, completion: completion)
    }

    /// Locks order: the parent's row first, then its children's — as a
    /// child's end does (``childrenEnded(_:_:)``), so the two never wait
    /// on each other in a circle.
    private static func join(_ join: ChildJoin, _ session: PostgresSession) async throws -> ChildJoinOutcome {
        let lease = join.lease
        let parentID = lease.jobID
        let held = try await session.firstRow(
            """
            SELECT attempt FROM {s}.jobs WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND claims = $3
            FOR NO KEY UPDATE
            """, parentID, lease.owner, lease.claim
        ) { try PostgresIndexedRow($0).int(0) }
        guard held != nil else {
            throw try await fenceError(lease, position: join.position, doing: "start the children of", session)
        }
        let existing =
            try await session.firstRow(
                "SELECT count(*) FROM {s}.jobs WHERE parent_id = $1 AND parent_stage = $2", parentID, join.position
            ) { try PostgresIndexedRow($0).int(0) } ?? 0
        var pools: Set<String> = []
        if existing < join.children.count {
            pools.formUnion(try await insertChildren(join, session))
        }
        // A retried parent runs again the children that did not fulfil; those that did are kept.
        let stale = try await session.rows(
            """
            SELECT id FROM {s}.jobs
            WHERE parent_id = $1 AND parent_stage = $2 AND parent_attempt < $3 AND state IN ('rejected', 'cancelled')
            ORDER BY id FOR NO KEY UPDATE
            """, parentID, join.position, join.parentAttempt
        ) { try PostgresIndexedRow($0).int64(0) }
        if !stale.isEmpty {
            try await retryAll(stale, session)
            pools.formUnion(join.children.map(\.pool))
        }
        try await session.execute(
            "UPDATE {s}.jobs SET parent_attempt = $1 WHERE parent_id = $2 AND parent_stage = $3 AND parent_attempt <> $1",
            join.parentAttempt, parentID, join.position)
        let tally = try await session.firstRow(
            """
            SELECT count(*) FILTER (WHERE state IN ('pending', 'running')),
                   count(*) FILTER (WHERE state IN ('rejected', 'cancelled'))
            FROM {s}.jobs WHERE parent_id = $1 AND parent_stage = $2
            """, parentID, join.position
        ) { row in (try PostgresIndexedRow(row).int(0), try PostgresIndexedRow(row).int(1)) }
        let (unresolved, failed) = tally ?? (0, 0)
        for pool in pools.sorted() { try await session.notify(.runnable(pool: pool)) }
        if unresolved > 0 && !(join.failFast && failed > 0) {
            try await session.execute(
                """
                UPDATE {s}.jobs SET state = 'pending', waiting_on = $1, wait_stage = $2, wait_fail_fast = $3,
                    lease_expires_at = NULL
                WHERE id = $4
                """, unresolved, join.position, join.failFast, parentID)
            // The countdown the children's ends decrement (``childrenEnded(_:_:)``).
            try await session.execute(
                """
                INSERT INTO {s}.job_joins (job_id, stage, attempt, fail_fast, remaining) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (job_id) DO UPDATE SET stage = excluded.stage, attempt = excluded.attempt,
                    fail_fast = excluded.fail_fast, remaining = excluded.remaining
                """, parentID, join.position, join.parentAttempt, join.failFast, unresolved)
            try await session.execute(
                """
                UPDATE {s}.stages SET state = 'running', attempts = $1, started_at = coalesce(started_at, $2::timestamptz),
                    finished_at = NULL, value = NULL, value_bytes = NULL, error = NULL, exit_code = NULL, error_code = NULL
                WHERE job_id = $3 AND position = $4
                """, join.attempt, Timestamp.text(join.at), parentID, join.position)
            return .waiting(children: unresolved)
        }
        try await session.execute("DELETE FROM {s}.job_joins WHERE job_id = $1", parentID)
        if unresolved > 0 {
            try await cancelChildren(
                of: parentID, stage: join.position,
                reason: JobStoreError.siblingRejectedMessage(parentID, position: join.position), session)
        }
        let outcomes = try await session.rows(
            """
            SELECT id, item_index, state, result, result_bytes, error, finished_at FROM {s}.jobs
            WHERE parent_id = $1 AND parent_stage = $2 ORDER BY item_index
            """, parentID, join.position
        ) { raw -> ChildOutcome in
            let row = PostgresIndexedRow(raw)
            let id = try row.int64(0)
            let text = try row.text(2) ?? ""
            guard let state = JobState(rawValue: text) else {
                throw PostgresQueryColumns.badState("jobs", "id \(id)", text, JobState.self, jobID: id)
            }
            return ChildOutcome(
                id: id, itemIndex: try row.int(1), state: state, result: try row.value(3), error: try row.text(5),
                finishedAt: try row.date(6))
        }
        return .settled(outcomes)
    }

    /// Inserts the children not inserted yet, with their stages; gives their pools.
    private static func insertChildren(_ join: ChildJoin, _ session: PostgresSession) async throws -> Set<String> {
        let inputs = join.children.map { PostgresStoredValue.split($0.input) }
        let inserted = try await session.rows(
            """
            INSERT INTO {s}.jobs (definition, pool, priority, input, input_bytes, run_at,
                                  parent_id, parent_stage, item_index, parent_attempt, limit_key)
            SELECT c.definition, c.pool, c.priority, c.input, c.input_bytes, now(), $6, $7, c.item_index - 1, $8,
                c.limit_key
            FROM unnest($1::text[], $2::text[], $3::int8[], $4::text[], $5::bytea[], $9::text[])
                WITH ORDINALITY AS c(definition, pool, priority, input, input_bytes, limit_key, item_index)
            ORDER BY c.item_index
            ON CONFLICT (parent_id, parent_stage, item_index) WHERE parent_id IS NOT NULL DO NOTHING
            RETURNING id, item_index
            """,
            join.children.map(\.definition), join.children.map(\.pool), join.children.map { Int64($0.priority) },
            PostgresArray(inputs.map(\.text)), PostgresArray.bytes(inputs.map(\.bytes)),
            join.lease.jobID, join.position, join.parentAttempt, PostgresArray(join.children.map(\.limitKey))
        ) { row in (try PostgresIndexedRow(row).int64(0), try PostgresIndexedRow(row).int(1)) }
        var jobIDs: [Int64] = []
        var positions: [Int64] = []
        var names: [String] = []
        var kinds: [String] = []
        for (id, index) in inserted {
            for (position, stage) in join.children[index].stages.enumerated() {
                jobIDs.append(id)
                positions.append(Int64(position))
                names.append(stage.name)
                kinds.append(stage.kind)
            }
        }
        if !jobIDs.isEmpty {
            try await session.execute(
                """
                INSERT INTO {s}.stages (job_id, position, name, kind)
                SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::text[])
                """, jobIDs, positions, names, kinds)
        }
        return Set(join.children.map(\.pool))
    }

    /// Cancels the children of `parentID` (of its stage `stage`, or all)
    /// and theirs, that have not ended: the pending ones at once, the
    /// running ones asked to stop (their hosts hear of it at commit).
    static func cancelChildren(
        of parentID: Int64, stage: Int?, reason: String, _ session: PostgresSession
    ) async throws {
        let rows = try await session.rows(
            """
            WITH RECURSIVE tree(id) AS (
                SELECT id FROM {s}.jobs WHERE parent_id = $1 AND ($2::int IS NULL OR parent_stage = $2::int)
                UNION ALL
                SELECT j.id FROM {s}.jobs j JOIN tree ON j.parent_id = tree.id),
            cancelled AS (
                UPDATE {s}.jobs SET state = 'cancelled', cancel_requested = true, finished_at = now(), error = $3,
                    waiting_on = 0
                FROM tree WHERE jobs.id = tree.id AND jobs.state = 'pending'
                RETURNING jobs.id),
            flagged AS (
                UPDATE {s}.jobs SET cancel_requested = true
                FROM tree WHERE jobs.id = tree.id AND jobs.state = 'running'
                RETURNING jobs.id)
            SELECT true, id FROM cancelled UNION ALL SELECT false, id FROM flagged
            """, parentID, stage, reason
        ) { row in (try PostgresIndexedRow(row).bool(0), try PostgresIndexedRow(row).int64(1)) }
        let cancelled = rows.filter(\.0).map(\.1)
        if !cancelled.isEmpty {
            try await session.execute(
                """
                UPDATE {s}.stages
                SET state = CASE state WHEN 'pending' THEN 'skipped' ELSE 'rejected' END,
                    error = CASE state WHEN 'running' THEN $1 ELSE error END,
                    error_code = CASE state WHEN 'running' THEN 'interrupted' ELSE error_code END
                WHERE job_id = ANY($2) AND state IN ('pending', 'running')
                """, JobStoreError.interruptedMessage(.cancelled), cancelled)
        }
        let ended = Set(cancelled)
        for (_, id) in rows where !ended.contains(id) {
            try await session.notify(.cancellationRequested(jobID: id))
        }
    }

    /// These jobs have just ended (or end in this transaction): for each
    /// that is a child whose parent waits for it, one fewer to wait for —
    /// none when it was the last or (fail-fast) was not fulfilled; a parent
    /// left waiting for none is told runnable at commit.
    ///
    /// The parents' rows are locked first, in a statement of their own: a
    /// parent whose join is being written by another transaction is then
    /// read, by the update that follows, as that transaction left it —
    /// waiting, and counting this child. Counting a child twice (a finish
    /// made again) only wakes its parent early: its join counts again and
    /// waits for the rest.
    ///
    /// The count is the parent's `job_joins` row, a small one whose update
    /// touches no index; the parent's `jobs` row is written only when its
    /// wait ends. A countdown left by a parent that no longer waits
    /// (cancelled meanwhile) may reach 0 as well: that parent is left as it is.
    static func childrenEnded(_ ended: [(id: Int64, state: JobState)], _ session: PostgresSession) async throws {
        guard !ended.isEmpty else { return }
        let ids = ended.map(\.id)
        try await session.execute(
            """
            SELECT p.id FROM {s}.jobs p
            WHERE p.id IN (SELECT parent_id FROM {s}.jobs WHERE id = ANY($1) AND parent_id IS NOT NULL)
            ORDER BY p.id FOR NO KEY UPDATE OF p
            """, ids)
        let woken = try await session.rows(
            """
            WITH w AS (SELECT * FROM unnest($1::int8[], $2::text[]) AS w(id, state)),
            c AS (
                SELECT j.parent_id, j.parent_stage, j.parent_attempt, count(*) AS n,
                       bool_or(w.state <> 'fulfilled') AS failed
                FROM w JOIN {s}.jobs j ON j.id = w.id
                WHERE j.parent_id IS NOT NULL
                GROUP BY j.parent_id, j.parent_stage, j.parent_attempt),
            counted AS (
                UPDATE {s}.job_joins p
                SET remaining = CASE WHEN c.failed AND p.fail_fast THEN 0 ELSE greatest(p.remaining - c.n, 0) END
                FROM c
                WHERE p.job_id = c.parent_id AND p.stage = c.parent_stage AND p.attempt = c.parent_attempt
                  AND p.remaining > 0
                RETURNING p.job_id, p.remaining)
            UPDATE {s}.jobs j SET waiting_on = 0
            FROM counted
            WHERE j.id = counted.job_id AND counted.remaining = 0 AND j.state = 'pending' AND j.waiting_on > 0
            RETURNING j.pool
            """, ids, ended.map(\.state.rawValue)
        ) { row in try PostgresIndexedRow(row).text(0) ?? "" }
        for pool in Set(woken).sorted() {
            try await session.notify(.runnable(pool: pool))
        }
    }

    /// These jobs have just ended (in this transaction, their rows already
    /// written and locked): the jobs that run after them wait for fewer —
    /// told runnable at commit when they wait for none — or, for an end
    /// that is not a fulfilment, are cancelled (and theirs in turn) unless
    /// they run after any end.
    static func dependenciesEnded(_ ended: [(id: Int64, state: JobState)], _ session: PostgresSession) async throws {
        var ended = ended
        while !ended.isEmpty {
            let rows = try await session.rows(
                """
                WITH w AS (SELECT * FROM unnest($1::int8[], $2::text[]) AS w(id, state)),
                d AS (
                    SELECT d.job_id, count(*) AS n,
                           min(CASE WHEN w.state <> 'fulfilled' AND NOT d.any_end THEN w.id END) AS culprit,
                           min(CASE WHEN w.state <> 'fulfilled' AND NOT d.any_end THEN w.state END) AS culprit_state
                    FROM w JOIN {s}.job_dependencies d ON d.after_id = w.id
                    GROUP BY d.job_id),
                counted AS (
                    UPDATE {s}.jobs j SET waiting_on = greatest(j.waiting_on - d.n, 0)
                    FROM d WHERE j.id = d.job_id AND d.culprit IS NULL AND j.state = 'pending' AND j.waiting_on > 0
                    RETURNING j.pool, j.waiting_on)
                SELECT pool, NULL::int8, NULL::text FROM counted WHERE waiting_on = 0
                UNION ALL
                SELECT NULL, job_id, culprit::text || ' ' || culprit_state FROM d WHERE culprit IS NOT NULL
                """, ended.map(\.id), ended.map(\.state.rawValue)
            ) { row in
                let row = PostgresIndexedRow(row)
                return (try row.text(0), try row.optionalInt64(1), try row.text(2))
            }
            var pools: Set<String> = []
            var next: [(Int64, JobState)] = []
            for (pool, dependent, culprit) in rows {
                if let pool { pools.insert(pool) }
                guard let dependent, let culprit else { continue }
                let parts = culprit.split(separator: " ")
                let after = Int64(parts.first ?? "") ?? 0
                let state = JobState(rawValue: String(parts.last ?? "")) ?? .cancelled
                let cancelled = try await session.execute(
                    """
                    UPDATE {s}.jobs SET state = 'cancelled', cancel_requested = true, finished_at = now(), error = $1,
                        waiting_on = 0
                    WHERE id = $2 AND state = 'pending' AND waiting_on > 0
                    RETURNING 1
                    """, JobStoreError.dependencyFailedMessage(after, state), dependent)
                if cancelled > 0 {
                    try await resolveStages(of: dependent, as: .cancelled, session)
                    next.append((dependent, .cancelled))
                }
            }
            for pool in pools.sorted() { try await session.notify(.runnable(pool: pool)) }
            ended = next
        }
    }

    public func children(of parentID: Int64, limit: Int) async throws -> [Job] {
        try await read(doing: "read the children of job \(parentID)") { session in
            try await session.rows(
                """
                SELECT \(PostgresQueryColumns.jobSummary) FROM {s}.jobs WHERE parent_id = $1
                ORDER BY parent_stage, item_index LIMIT $2
                """, parentID, max(0, limit), decode: PostgresQueryColumns.job)
        }
    }
}
