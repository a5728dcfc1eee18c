import Foundation
import JobStore
import JobValues
internal import PostgresNIO

/// The claim of a pool with concurrency limits (``ClaimFlow``): the one
/// place where PostgreSQL's claim honours them.
///
/// Hosts claim at the same time, each in its own transaction: two that both
/// counted 2 running jobs under a global limit of 3 would each take one, 4
/// in all. So a limited claim takes a transaction-level advisory lock on
/// its pool first (released at commit): the limited claims of one pool run
/// one after another across every host, and each counts what the previous
/// one committed (READ COMMITTED: each statement sees the commits before
/// it). The count is of running jobs under live leases: a dead host's jobs
/// stop counting when their leases expire — a slot cannot leak.
///
/// Rates (``StartRate``) are kept the same way: under the pool's lock, the
/// claim reads the database's clock (`clock_timestamp()`, not the
/// transaction's start, which may be long before the lock was granted),
/// deletes the starts whose slots freed, counts those not freed of each
/// rated definition and key it meets, and writes a start for each rated job
/// it takes. A host that dies after its claim committed leaves starts that
/// free on their own at the end of their window.
///
/// It runs on a connection of its own, outside the group-commit writer:
/// its transaction holds the pool's lock and waits for nothing but that
/// lock, so no other transaction of this store can be waiting for it while
/// it waits for them (no deadlock).
extension PostgresJobStore {
    /// Jobs read per page of the walk (the first page: twice the jobs asked
    /// for, at least 8, so a claim of one job reads few).
    static let flowPage = 256

    func claimLimited(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow
    ) async throws -> [ClaimedJob] {
        try await read(doing: "claim jobs of pool \(pool)") { session in
            try await session.execute("BEGIN")
            do {
                let claimed = try await Self.claimLimited(
                    pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, flow: flow, session)
                try await session.execute("COMMIT")
                return claimed
            } catch {
                await session.rollBack(after: error)
                throw error
            }
        }
    }

    private static func claimLimited(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow,
        _ session: PostgresSession
    ) async throws -> [ClaimedJob] {
        try await session.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1)::bigint)", "jobd.claim.\(session.schema).\(pool)")
        let definitions = flow.limits.filter { $0.value.global != nil }.keys.sorted()
        let running = try await session.rows(
            """
            SELECT definition, count(*) FROM {s}.jobs
            WHERE state = 'running' AND limit_key IS NOT NULL AND definition = ANY($1) AND lease_expires_at > now()
            GROUP BY definition
            """, definitions
        ) { row -> (String, Int) in
            let row = PostgresIndexedRow(row)
            return (try row.text(0) ?? "", try row.int(1))
        }
        var inPool = 0
        if flow.pool != nil {
            inPool =
                try await session.firstRow(
                    """
                    SELECT count(*) FROM {s}.jobs
                    WHERE state = 'running' AND pool = $1 AND limit_key IS NOT NULL AND lease_expires_at > now()
                    """, pool
                ) { try PostgresIndexedRow($0).int(0) } ?? 0
        }
        var gate = FlowGate(flow: flow, running: Dictionary(running, uniquingKeysWith: +), inPool: inPool)
        // The claim's time for rates, after the lock; the starts freed by then go.
        let rateNow: String? =
            flow.rates.isEmpty
            ? nil
            : try await session.firstRow(
                """
                WITH clock AS (SELECT clock_timestamp() AS claimed_at),
                    freed AS (DELETE FROM {s}.rate_starts WHERE frees_at <= (SELECT claimed_at FROM clock))
                SELECT claimed_at::text FROM clock
                """
            ) { try PostgresIndexedRow($0).text(0) } ?? nil
        /// Tells the gate the running jobs of the keys of `page` it has not counted.
        func countRunning(of page: [FlowGate.Slot]) async throws {
            let slots = gate.uncounted(page)
            guard !slots.isEmpty else { return }
            let counted = try await session.rows(
                """
                SELECT s.definition, s.key, count(j.id) FROM unnest($1::text[], $2::text[]) AS s(definition, key)
                LEFT JOIN {s}.jobs AS j ON j.state = 'running' AND j.definition = s.definition
                    AND j.limit_key = s.key AND j.lease_expires_at > now()
                GROUP BY s.definition, s.key
                """, slots.map(\.definition), slots.map(\.key)
            ) { row -> (FlowGate.Slot, Int) in
                let row = PostgresIndexedRow(row)
                return (FlowGate.Slot(definition: try row.text(0) ?? "", key: try row.text(1) ?? ""), try row.int(2))
            }
            gate.count(Dictionary(counted, uniquingKeysWith: +))
        }
        /// Tells the gate the starts not freed of the rate keys of `page` it has not counted.
        func countStarts(of page: [FlowGate.Slot]) async throws {
            guard let rateNow else { return }
            let rated = gate.uncountedRates(page)
            guard !rated.isEmpty else { return }
            let started = try await session.rows(
                """
                SELECT s.definition, s.key, (
                    SELECT count(*) FROM (
                        SELECT 1 FROM {s}.rate_starts AS r
                        WHERE r.definition = s.definition AND r.rate_key = s.key AND r.frees_at > $3::timestamptz
                        LIMIT s.most) AS window_starts)
                FROM unnest($1::text[], $2::text[], $4::int8[]) AS s(definition, key, most)
                """, rated.map(\.definition), rated.map(\.key), rateNow,
                rated.map { Int64(flow.rates[$0.definition]?.count ?? 0) }
            ) { row -> (FlowGate.Slot, Int) in
                let row = PostgresIndexedRow(row)
                return (FlowGate.Slot(definition: try row.text(0) ?? "", key: try row.text(1) ?? ""), try row.int(2))
            }
            gate.countStarts(Dictionary(started, uniquingKeysWith: +))
        }
        func countKeys(of page: [FlowGate.Slot]) async throws {
            try await countRunning(of: page)
            try await countStarts(of: page)
        }
        var chosen: [Int64] = []
        /// The rate slot each rated job taken starts in.
        var rated: [Int64: FlowGate.Slot] = [:]
        func take(id: Int64, definition: String, key: String) {
            guard gate.admit(definition: definition, key: key) else { return }
            chosen.append(id)
            if let rate = flow.rates[definition] {
                rated[id] = FlowGate.Slot(definition: definition, key: rate.key(limitKey: key))
            }
        }
        if flow.isFair {
            // Each key's first runnable job, then each key's second, …
            let fair = flow.limits.filter { $0.value.order == .fair }.keys.sorted()
            let candidates = try await session.rows(
                """
                SELECT id, definition, coalesce(limit_key, '') FROM (
                    SELECT id, definition, limit_key, priority, run_at,
                        CASE WHEN definition = ANY($2)
                            THEN row_number() OVER (PARTITION BY definition, limit_key ORDER BY priority DESC, run_at, id)
                            ELSE 1 END AS turn
                    FROM {s}.jobs WHERE state = 'pending' AND waiting_on = 0 AND pool = $1 AND run_at <= now() AND \(notPaused))
                    AS ranked
                ORDER BY priority DESC, turn, run_at, id
                """, pool, fair, decode: candidate)
            try await countKeys(of: candidates.map { FlowGate.Slot(definition: $0.definition, key: $0.key) })
            for job in candidates where chosen.count < limit {
                take(id: job.id, definition: job.definition, key: job.key)
            }
        } else {
            var last: (priority: Int, runAt: String, id: Int64)?
            var pageSize = min(flowPage, max(8, limit * 2))
            while chosen.count < limit {
                let page = try await session.rows(
                    """
                    SELECT id, definition, coalesce(limit_key, ''), priority, run_at::text FROM {s}.jobs
                    WHERE state = 'pending' AND waiting_on = 0 AND pool = $1 AND run_at <= now() AND \(notPaused)
                        AND ($2::int4 IS NULL OR priority < $2::int4
                             OR (priority = $2::int4 AND (run_at, id) > ($3::timestamptz, $4::int8)))
                    ORDER BY priority DESC, run_at, id
                    LIMIT $5
                    """, pool, last?.priority, last?.runAt, last?.id, pageSize
                ) { row -> (id: Int64, definition: String, key: String, priority: Int, runAt: String) in
                    let row = PostgresIndexedRow(row)
                    return (
                        try row.int64(0), try row.text(1) ?? "", try row.text(2) ?? "", try row.int(3),
                        try row.text(4) ?? ""
                    )
                }
                try await countKeys(of: page.map { FlowGate.Slot(definition: $0.definition, key: $0.key) })
                for job in page where chosen.count < limit {
                    take(id: job.id, definition: job.definition, key: job.key)
                }
                guard page.count == pageSize, let end = page.last else { break }
                last = (end.priority, end.runAt, end.id)
                pageSize = flowPage
            }
        }
        guard !chosen.isEmpty else { return [] }
        // A job changed since it was read (cancelled, deleted) is not taken.
        // A rated claim's start is at its rate time, the time its starts are logged at.
        let taken = try await session.rows(
            """
            UPDATE {s}.jobs
            SET state = 'running', lease_owner = $2, lease_expires_at = now() + $3::float8 * interval '1 millisecond',
                claims = claims + 1, started_at = coalesce(started_at, $4::timestamptz, now())
            WHERE id = ANY($1) AND state = 'pending'
            RETURNING \(PostgresQueryColumns.job)
            """,
            chosen, owner, Double(leaseDuration.milliseconds), rateNow, decode: PostgresQueryColumns.job)
        if let rateNow {
            let starts = taken.compactMap { job in rated[job.id].map { (job: job.id, slot: $0) } }
            if !starts.isEmpty {
                try await session.execute(
                    """
                    INSERT INTO {s}.rate_starts (definition, rate_key, job_id, frees_at)
                    SELECT definition, key, job, $4::timestamptz + window_ms * interval '1 millisecond'
                    FROM unnest($1::text[], $2::text[], $3::int8[], $5::float8[]) AS s(definition, key, job, window_ms)
                    """, starts.map(\.slot.definition), starts.map(\.slot.key), starts.map(\.job), rateNow,
                    starts.map { Double(flow.rates[$0.slot.definition]?.window.milliseconds ?? 0) })
            }
        }
        let order = Dictionary(uniqueKeysWithValues: chosen.enumerated().map { ($1, $0) })
        let jobs = taken.sorted { order[$0.id, default: 0] < order[$1.id, default: 0] }
        let stages = try await Self.stages(of: jobs.map(\.id), session)
        return jobs.map { job in
            let lease = Lease(
                jobID: job.id, owner: owner, claim: job.claims, expiresAt: job.leaseExpiresAt ?? job.runAt)
            return ClaimedJob(job: job, stages: stages[job.id] ?? [], lease: lease)
        }
    }

    private static func candidate(_ row: PostgresRow) throws -> (id: Int64, definition: String, key: String) {
        let row = PostgresIndexedRow(row)
        return (try row.int64(0), try row.text(1) ?? "", try row.text(2) ?? "")
    }
}
