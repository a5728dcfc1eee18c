import Foundation
internal import GRDB
import JobStore

/// Why pending jobs wait (``JobReadStore/waitReasons(of:rules:)``): the
/// facts a claim would meet, read in one snapshot, judged by
/// ``WaitAnalysis``. Lists of ids and names go to SQL as one JSON array
/// (`json_each`), so each statement's text is the same whatever the page.
extension SQLiteJobStore {
    public func waitReasons(of ids: [Int64], rules: WaitRules) async throws -> [Int64: WaitReason] {
        guard !ids.isEmpty else { return [:] }
        let (reasons, jobs) = try await read(doing: "read why jobs wait") {
            db -> ([Int64: WaitReason], [WaitAnalysis.Pending]) in
            let now = Date()
            let nowText = Timestamp.text(now)
            let pending = try Self.pendingForWait(ids, db)
            guard !pending.isEmpty else { return ([:], []) }
            let analysis = WaitAnalysis(
                rules: rules, now: now, pauses: try Self.pauses(db, where: "until IS NULL OR until > ?", [nowText]),
                running: try Self.runningForWait(now: nowText, db))
            let after = try Self.openDependencies(
                of: pending.filter { $0.waitingOn > 0 && $0.waitStage == nil }.map(\.id), db)
            let perKey = WaitAnalysis.perKeyLimits(rules)
            let keyed = pending.filter { $0.waitingOn == 0 && $0.runAt <= now && perKey[$0.definition] != nil }
            let heads = try Self.keyHeads(
                of: keyed, limit: perKey.values.max() ?? 0, now: nowText, db)
            var reasons: [Int64: WaitReason] = [:]
            for job in pending {
                let slot = FlowGate.Slot(definition: job.definition, key: job.limitKey ?? "")
                reasons[job.id] = analysis.reason(
                    job, after: after[job.id] ?? [],
                    keyHeads: Array((heads[slot] ?? []).prefix(perKey[job.definition] ?? 0)))
            }
            return (reasons, pending)
        }
        return try await withRates(reasons, of: jobs, rules: rules)
    }

    public func waitingJobCounts(rules: WaitRules) async throws -> [WaitReason.Code: Int] {
        try await read(doing: "count the pending jobs by why they wait") { db in
            let now = Date()
            let nowText = Timestamp.text(now)
            let analysis = WaitAnalysis(
                rules: rules, now: now, pauses: try Self.pauses(db, where: "until IS NULL OR until > ?", [nowText]),
                running: try Self.runningForWait(now: nowText, db))
            // One pass over the pending jobs; the runnable jobs of a
            // definition with a per-key limit or rate are grouped by key as well.
            let statement = try RawStatement(
                db,
                """
                SELECT pool, definition,
                    CASE WHEN waiting_on > 0 THEN (CASE WHEN wait_stage IS NULL THEN 1 ELSE 0 END)
                         WHEN run_at > ?1 THEN 2 ELSE 3 END AS waiting,
                    CASE WHEN waiting_on = 0 AND run_at <= ?1 AND definition IN (SELECT value FROM json_each(?2))
                         THEN coalesce(limit_key, '') END AS key,
                    count(*)
                FROM jobs WHERE state = 'pending'
                GROUP BY pool, definition, waiting, key
                """)
            try statement.bind(1, nowText)
            try statement.bind(2, Self.jsonArray(WaitAnalysis.keyedDefinitions(rules)))
            let groups = try statement.rows { row in
                WaitAnalysis.Group(
                    pool: row.text(0) ?? "", definition: row.text(1) ?? "",
                    waiting: WaitAnalysis.Group.Waiting(code: row.int(2)),
                    key: row.text(3), count: row.int(4))
            }
            return analysis.count(groups, usedRates: try Self.usedRates(WaitAnalysis.rates(rules), now: nowText, db))
        }
    }

    /// The rate slots (definition, rate key) of `rates` whose starts not
    /// freed at `now` reach the rate: one grouped read of `rate_starts`,
    /// which holds at most the starts of the last window.
    private static func usedRates(
        _ rates: [String: StartRate], now: String, _ db: Database
    ) throws -> Set<FlowGate.Slot> {
        guard !rates.isEmpty else { return [] }
        let statement = try RawStatement(
            db,
            """
            SELECT r.definition, r.rate_key FROM json_each(?2) AS d
            JOIN rate_starts AS r INDEXED BY rate_starts_key ON r.definition = d.key
            WHERE r.frees_at > ?1
            GROUP BY r.definition, r.rate_key HAVING count(*) >= max(d.value)
            """)
        try statement.bind(1, now)
        try statement.bind(2, String(decoding: try JSONEncoder().encode(rates.mapValues(\.count)), as: UTF8.self))
        return Set(try statement.rows { FlowGate.Slot(definition: $0.text(0) ?? "", key: $0.text(1) ?? "") })
    }

    /// The pending jobs among `ids`, as the judgement needs them.
    private static func pendingForWait(_ ids: [Int64], _ db: Database) throws -> [WaitAnalysis.Pending] {
        let statement = try RawStatement(
            db,
            """
            SELECT id, definition, pool, priority, run_at, \(Columns.waitingOn), wait_stage, limit_key FROM jobs
            WHERE id IN (SELECT value FROM json_each(?)) AND state = 'pending'
            """)
        try statement.bind(1, jsonArray(ids))
        return try statement.rows { row -> WaitAnalysis.Pending? in
            guard let runAt = row.text(4).flatMap(Timestamp.date) else { return nil }
            return WaitAnalysis.Pending(
                id: row.int64(0), definition: row.text(1) ?? "", pool: row.text(2) ?? "", priority: row.int(3),
                runAt: runAt, waitingOn: row.int(5), waitStage: row.optionalInt(6), limitKey: row.text(7))
        }.compactMap { $0 }
    }

    /// The running jobs under live leases, by pool, definition, limit key
    /// and owner: at most the pools' sizes on each host, found in `jobs_state`.
    private static func runningForWait(now: String, _ db: Database) throws -> [WaitAnalysis.Running] {
        let statement = try RawStatement(
            db,
            """
            SELECT pool, definition, limit_key, coalesce(lease_owner, ''), count(*) FROM jobs
            WHERE state = 'running' AND lease_expires_at > ?
            GROUP BY pool, definition, limit_key, lease_owner
            """)
        try statement.bind(1, now)
        return try statement.rows { row in
            WaitAnalysis.Running(
                pool: row.text(0) ?? "", definition: row.text(1) ?? "", limitKey: row.text(2),
                owner: row.text(3) ?? "", count: row.int(4))
        }
    }

    /// For each of `ids` (jobs waiting for `--after` jobs), the jobs it runs
    /// after that have not ended, in id order.
    private static func openDependencies(of ids: [Int64], _ db: Database) throws -> [Int64: [Int64]] {
        guard !ids.isEmpty else { return [:] }
        let statement = try RawStatement(
            db,
            """
            SELECT d.job_id, d.after_id FROM job_dependencies d JOIN jobs a ON a.id = d.after_id
            WHERE d.job_id IN (SELECT value FROM json_each(?)) AND a.state IN ('pending', 'running')
            ORDER BY d.job_id, d.after_id
            """)
        try statement.bind(1, jsonArray(ids))
        var after: [Int64: [Int64]] = [:]
        for (job, ahead) in try statement.rows({ ($0.int64(0), $0.int64(1)) }) { after[job, default: []].append(ahead) }
        return after
    }

    /// Of the keys of `jobs`, the runnable pending jobs first in the claim's
    /// order, at most `limit` per key. Reads the pending jobs of those
    /// definitions (`jobs_definition_state`) and keeps those of the keys.
    private static func keyHeads(
        of jobs: [WaitAnalysis.Pending], limit: Int, now: String, _ db: Database
    ) throws -> [FlowGate.Slot: [WaitAnalysis.Pending]] {
        guard !jobs.isEmpty, limit > 0 else { return [:] }
        let statement = try RawStatement(
            db,
            """
            SELECT id, definition, pool, priority, run_at, key FROM (
                SELECT id, definition, pool, priority, run_at, coalesce(limit_key, '') AS key,
                    row_number() OVER (PARTITION BY definition, coalesce(limit_key, '')
                                       ORDER BY priority DESC, run_at, id) AS place
                FROM jobs
                WHERE definition IN (SELECT value FROM json_each(?1)) AND state = 'pending' AND waiting_on = 0
                    AND run_at <= ?2 AND coalesce(limit_key, '') IN (SELECT value FROM json_each(?3)))
            WHERE place <= ?4
            ORDER BY definition, key, place
            """)
        try statement.bind(1, jsonArray(Set(jobs.map(\.definition)).sorted()))
        try statement.bind(2, now)
        try statement.bind(3, jsonArray(Set(jobs.map { $0.limitKey ?? "" }).sorted()))
        try statement.bind(4, limit)
        var heads: [FlowGate.Slot: [WaitAnalysis.Pending]] = [:]
        for (slot, job) in try statement.rows({ row -> (FlowGate.Slot, WaitAnalysis.Pending)? in
            guard let runAt = row.text(4).flatMap(Timestamp.date) else { return nil }
            let key = row.text(5) ?? ""
            let definition = row.text(1) ?? ""
            let job = WaitAnalysis.Pending(
                id: row.int64(0), definition: definition, pool: row.text(2) ?? "", priority: row.int(3), runAt: runAt,
                limitKey: key)
            return (FlowGate.Slot(definition: definition, key: key), job)
        }).compactMap({ $0 }) {
            heads[slot, default: []].append(job)
        }
        return heads
    }

    /// `["a","b"]`: names (or ids as text) for `json_each`.
    private static func jsonArray<Item: Encodable>(_ items: [Item]) throws -> String {
        String(decoding: try JSONEncoder().encode(items), as: UTF8.self)
    }
}
