import Foundation
import JobStore
internal import PostgresNIO

/// Why pending jobs wait, as `SQLiteJobStore+WaitReasons.swift` reads it:
/// the facts a claim would meet, judged by ``WaitAnalysis``, by the
/// database's clock. Each statement sees what was committed when it
/// started; the reads are few and quick, so a claim between them changes
/// a reason at most as a moment later would.
extension PostgresJobStore {
    public func waitReasons(of ids: [Int64], rules: WaitRules) async throws -> [Int64: WaitReason] {
        guard !ids.isEmpty else { return [:] }
        let (reasons, pending) = try await read(doing: "read why jobs wait") {
            session -> ([Int64: WaitReason], [WaitAnalysis.Pending]) in
            let pending = try await session.rows(
                """
                SELECT id, definition, pool, priority, run_at, \(PostgresQueryColumns.waitingOn), wait_stage, limit_key,
                    now() FROM {s}.jobs
                WHERE id = ANY($1) AND state = 'pending'
                """, ids
            ) { row -> (WaitAnalysis.Pending, Date?) in
                let row = PostgresIndexedRow(row)
                return (
                    WaitAnalysis.Pending(
                        id: try row.int64(0), definition: try row.text(1) ?? "", pool: try row.text(2) ?? "",
                        priority: try row.int(3), runAt: try row.date(4) ?? Date(), waitingOn: try row.int(5),
                        waitStage: try row.optionalInt(6), limitKey: try row.text(7)),
                    try row.date(8)
                )
            }
            guard let now = pending.first?.1 else { return ([:], []) }
            let jobs = pending.map(\.0)
            let analysis = WaitAnalysis(
                rules: rules, now: now, pauses: try await Self.holdingPauses(session),
                running: try await Self.runningForWait(session))
            var after: [Int64: [Int64]] = [:]
            let waitingAfter = jobs.filter { $0.waitingOn > 0 && $0.waitStage == nil }.map(\.id)
            if !waitingAfter.isEmpty {
                for (job, ahead) in try await session.rows(
                    """
                    SELECT d.job_id, d.after_id FROM {s}.job_dependencies d JOIN {s}.jobs a ON a.id = d.after_id
                    WHERE d.job_id = ANY($1) AND a.state IN ('pending', 'running')
                    ORDER BY d.job_id, d.after_id
                    """, waitingAfter,
                    decode: { row in (try PostgresIndexedRow(row).int64(0), try PostgresIndexedRow(row).int64(1)) })
                {
                    after[job, default: []].append(ahead)
                }
            }
            let perKey = WaitAnalysis.perKeyLimits(rules)
            let keyed = jobs.filter { $0.waitingOn == 0 && $0.runAt <= now && perKey[$0.definition] != nil }
            var heads: [FlowGate.Slot: [WaitAnalysis.Pending]] = [:]
            if !keyed.isEmpty {
                // The first runnable jobs of each key in the claim's order,
                // read from the pending jobs of those definitions.
                let rows = try await session.rows(
                    """
                    SELECT id, definition, pool, priority, run_at, key FROM (
                        SELECT id, definition, pool, priority, run_at, coalesce(limit_key, '') AS key,
                            row_number() OVER (PARTITION BY definition, coalesce(limit_key, '')
                                               ORDER BY priority DESC, run_at, id) AS place
                        FROM {s}.jobs
                        WHERE definition = ANY($1) AND state = 'pending' AND waiting_on = 0 AND run_at <= $2
                            AND coalesce(limit_key, '') = ANY($3)) AS ranked
                    WHERE place <= $4
                    ORDER BY definition, key, place
                    """, Set(keyed.map(\.definition)).sorted(), now, Set(keyed.map { $0.limitKey ?? "" }).sorted(),
                    perKey.values.max() ?? 0
                ) { row -> WaitAnalysis.Pending in
                    let row = PostgresIndexedRow(row)
                    return WaitAnalysis.Pending(
                        id: try row.int64(0), definition: try row.text(1) ?? "", pool: try row.text(2) ?? "",
                        priority: try row.int(3), runAt: try row.date(4) ?? now, limitKey: try row.text(5) ?? "")
                }
                for job in rows {
                    heads[FlowGate.Slot(definition: job.definition, key: job.limitKey ?? ""), default: []].append(job)
                }
            }
            var reasons: [Int64: WaitReason] = [:]
            for job in jobs {
                let slot = FlowGate.Slot(definition: job.definition, key: job.limitKey ?? "")
                reasons[job.id] = analysis.reason(
                    job, after: after[job.id] ?? [],
                    keyHeads: Array((heads[slot] ?? []).prefix(perKey[job.definition] ?? 0)))
            }
            return (reasons, jobs)
        }
        return try await withRates(reasons, of: pending, rules: rules)
    }

    public func waitingJobCounts(rules: WaitRules) async throws -> [WaitReason.Code: Int] {
        try await read(doing: "count the pending jobs by why they wait") { session in
            let read: Date?? = try await session.firstRow("SELECT now()") { try PostgresIndexedRow($0).date(0) }
            let now: Date = (read ?? nil) ?? Date()
            let analysis = WaitAnalysis(
                rules: rules, now: now, pauses: try await Self.holdingPauses(session),
                running: try await Self.runningForWait(session))
            // One pass over the pending jobs; the runnable jobs of a
            // definition with a per-key limit or rate are grouped by key as well.
            let groups = try await session.rows(
                """
                SELECT pool, definition,
                    CASE WHEN waiting_on > 0 THEN (CASE WHEN wait_stage IS NULL THEN 1 ELSE 0 END)
                         WHEN run_at > $1 THEN 2 ELSE 3 END AS waiting,
                    CASE WHEN waiting_on = 0 AND run_at <= $1 AND definition = ANY($2)
                         THEN coalesce(limit_key, '') END AS key,
                    count(*)
                FROM {s}.jobs WHERE state = 'pending'
                GROUP BY pool, definition, waiting, key
                """, now, WaitAnalysis.keyedDefinitions(rules)
            ) { row -> WaitAnalysis.Group in
                let row = PostgresIndexedRow(row)
                return WaitAnalysis.Group(
                    pool: try row.text(0) ?? "", definition: try row.text(1) ?? "",
                    waiting: WaitAnalysis.Group.Waiting(code: try row.int(2)), key: try row.text(3),
                    count: try row.int(4))
            }
            return analysis.count(
                groups, usedRates: try await Self.usedRates(WaitAnalysis.rates(rules), now: now, session))
        }
    }

    /// The rate slots (definition, rate key) of `rates` whose starts not
    /// freed at `now` reach the rate: one grouped read of `rate_starts`,
    /// which holds at most the starts of the last window.
    private static func usedRates(
        _ rates: [String: StartRate], now: Date, _ session: PostgresSession
    ) async throws -> Set<FlowGate.Slot> {
        guard !rates.isEmpty else { return [] }
        let definitions = rates.keys.sorted()
        return Set(
            try await session.rows(
                """
                SELECT r.definition, r.rate_key FROM unnest($2::text[], $3::int8[]) AS d(definition, n)
                JOIN {s}.rate_starts AS r ON r.definition = d.definition
                WHERE r.frees_at > $1
                GROUP BY r.definition, r.rate_key, d.n HAVING count(*) >= d.n
                """, now, definitions, definitions.map { Int64(rates[$0]?.count ?? 0) }
            ) { row in
                let row = PostgresIndexedRow(row)
                return FlowGate.Slot(definition: try row.text(0) ?? "", key: try row.text(1) ?? "")
            })
    }

    private static func holdingPauses(_ session: PostgresSession) async throws -> [Pause] {
        try await session.rows(
            """
            SELECT scope, name, reason, actor, created_at, until FROM {s}.pauses
            WHERE until IS NULL OR until > now()
            """
        ) { row -> Pause? in
            let row = PostgresIndexedRow(row)
            guard let scope = PauseScope(rawValue: try row.text(0) ?? "") else { return nil }
            return Self.pause(scope, row)
        }.compactMap { $0 }
    }

    /// The running jobs under live leases, by pool, definition, limit key and owner.
    private static func runningForWait(_ session: PostgresSession) async throws -> [WaitAnalysis.Running] {
        try await session.rows(
            """
            SELECT pool, definition, limit_key, coalesce(lease_owner, ''), count(*) FROM {s}.jobs
            WHERE state = 'running' AND lease_expires_at > now()
            GROUP BY pool, definition, limit_key, lease_owner
            """
        ) { row in
            let row = PostgresIndexedRow(row)
            return WaitAnalysis.Running(
                pool: try row.text(0) ?? "", definition: try row.text(1) ?? "", limitKey: try row.text(2),
                owner: try row.text(3) ?? "", count: try row.int(4))
        }
    }
}
