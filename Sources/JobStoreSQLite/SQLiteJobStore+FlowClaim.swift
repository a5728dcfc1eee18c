import Foundation
internal import GRDB
import JobStore

/// The claim of a pool with concurrency limits (``ClaimFlow``): the one
/// place where SQLite's claim honours them.
///
/// Inside the claim's write transaction (SQLite has one writer at a time,
/// so no other claim counts meanwhile): count the running jobs under live
/// leases of each limited definition, by limit key; then walk the pool's
/// runnable jobs in the claim's order, a page at a time, and take each one
/// the ``FlowGate`` admits until `limit` are taken or none is left. A job
/// over its limit is passed over; the jobs behind it are still taken.
extension SQLiteJobStore {
    /// Jobs read per page of the walk.
    static let flowPage = 256

    static func claimLimited(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow, _ db: Database
    ) throws -> [ClaimedJob] {
        let nowMs = Timestamp.milliseconds(Date())
        let now = Timestamp.text(milliseconds: nowMs)
        var gate = FlowGate(flow: flow, running: try runningUnderLiveLeases(flow: flow, now: now, db))
        var chosen: [Int64] = []
        if flow.isFair {
            // Each key's first runnable job, then each key's second, …: one
            // read of the pool's runnable jobs, ranked within their key.
            let fair = flow.limits.filter { $0.value.order == .fair }.keys.sorted()
            let marks = fair.map { _ in "?" }.joined(separator: ", ")
            let statement = try RawStatement(
                db,
                """
                SELECT id, definition, coalesce(limit_key, '') FROM (
                    SELECT id, definition, limit_key, priority, run_at,
                        CASE WHEN definition IN (\(marks))
                            THEN row_number() OVER (PARTITION BY definition, limit_key ORDER BY priority DESC, run_at, id)
                            ELSE 1 END AS turn
                    FROM jobs INDEXED BY jobs_claim
                    WHERE state = 'pending' AND pool = ? AND run_at <= ? AND typeof(priority) = 'integer')
                ORDER BY priority DESC, turn, run_at, id
                """)
            for (index, definition) in fair.enumerated() { try statement.bind(Int32(index + 1), definition) }
            try statement.bind(Int32(fair.count + 1), pool)
            try statement.bind(Int32(fair.count + 2), now)
            let candidates = try statement.rows { row in
                (id: row.int64(0), definition: row.text(1) ?? "", key: row.text(2) ?? "")
            }
            for candidate in candidates where chosen.count < limit {
                if gate.admit(definition: candidate.definition, key: candidate.key) { chosen.append(candidate.id) }
            }
        } else {
            let first = try RawStatement(
                db,
                """
                SELECT id, definition, coalesce(limit_key, ''), priority, run_at FROM jobs INDEXED BY jobs_claim
                WHERE state = 'pending' AND pool = ? AND run_at <= ? AND typeof(priority) = 'integer'
                ORDER BY priority DESC, run_at, id
                LIMIT ?
                """)
            let after = try RawStatement(
                db,
                """
                SELECT id, definition, coalesce(limit_key, ''), priority, run_at FROM jobs INDEXED BY jobs_claim
                WHERE state = 'pending' AND pool = ? AND run_at <= ? AND typeof(priority) = 'integer'
                    AND (priority < ? OR (priority = ? AND (run_at > ? OR (run_at = ? AND id > ?))))
                ORDER BY priority DESC, run_at, id
                LIMIT ?
                """)
            var last: (priority: Int64, runAt: String, id: Int64)?
            while chosen.count < limit {
                let statement: RawStatement
                if let last {
                    statement = after
                    try statement.bind(3, last.priority)
                    try statement.bind(4, last.priority)
                    try statement.bind(5, last.runAt)
                    try statement.bind(6, last.runAt)
                    try statement.bind(7, last.id)
                    try statement.bind(8, flowPage)
                } else {
                    statement = first
                    try statement.bind(3, flowPage)
                }
                try statement.bind(1, pool)
                try statement.bind(2, now)
                let page = try statement.rows { row in
                    (
                        id: row.int64(0), definition: row.text(1) ?? "", key: row.text(2) ?? "",
                        priority: row.int64(3), runAt: row.text(4) ?? ""
                    )
                }
                for candidate in page where chosen.count < limit {
                    if gate.admit(definition: candidate.definition, key: candidate.key) {
                        chosen.append(candidate.id)
                    }
                }
                guard page.count == flowPage, let end = page.last else { break }
                last = (end.priority, end.runAt, end.id)
            }
        }
        let read = try RawStatement(db, "SELECT \(Columns.job) FROM jobs WHERE id = ?")
        var jobs: [Job] = []
        for id in chosen {
            try read.bind(1, id)
            do {
                if let job = try read.firstRow(Columns.job) { jobs.append(job) }
            } catch let error as JobStoreError where error.code == .badRow {
                try quarantine(error, jobID: id, now: now, db)
            }
        }
        return try take(jobs, owner: owner, leaseDuration: leaseDuration, nowMs: nowMs, db)
    }

    /// The running jobs under live leases of `flow`'s definitions, by
    /// (definition, limit key); a job without a key counts under `''`.
    private static func runningUnderLiveLeases(
        flow: ClaimFlow, now: String, _ db: Database
    ) throws -> [(definition: String, key: String, count: Int)] {
        let definitions = flow.limits.keys.sorted()
        let marks = definitions.map { _ in "?" }.joined(separator: ", ")
        let statement = try RawStatement(
            db,
            """
            SELECT definition, coalesce(limit_key, ''), count(*) FROM jobs INDEXED BY jobs_running_limit
            WHERE state = 'running' AND definition IN (\(marks)) AND lease_expires_at > ?
            GROUP BY definition, coalesce(limit_key, '')
            """)
        for (index, definition) in definitions.enumerated() { try statement.bind(Int32(index + 1), definition) }
        try statement.bind(Int32(definitions.count + 1), now)
        return try statement.rows { row in (definition: row.text(0) ?? "", key: row.text(1) ?? "", count: row.int(2)) }
    }
}
