import Foundation
internal import GRDB
import JobStore

/// The claim of a pool with concurrency limits (``ClaimFlow``) or paused
/// definitions: the one place where SQLite's claim honours them.
///
/// Inside the claim's write transaction (SQLite has one writer at a time,
/// so no other claim counts meanwhile): count the running jobs under live
/// leases of each limited definition; then walk the pool's runnable jobs in
/// the claim's order, a page at a time, and take each job the ``FlowGate``
/// admits until `limit` are taken or none is
/// left. A job over its limit is passed over; the jobs behind it are still
/// taken. A key's running jobs are counted when the walk first meets it.
/// A job of a paused definition is passed over the same way, and one whose
/// rate has no free slot (``StartRate``): the starts of its definition and
/// rate key not yet freed are counted when the walk first meets it, and each
/// job taken writes its start in the same transaction.
extension SQLiteJobStore {
    /// Jobs read per page of the walk (the first page: twice the jobs asked
    /// for, so a claim of one job reads few).
    static let flowPage = 256

    static func claimLimited(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow, paused: Set<String>,
        _ db: Database
    ) throws -> [ClaimedJob] {
        let nowMs = Timestamp.milliseconds(Date())
        let now = Timestamp.text(milliseconds: nowMs)
        var gate = FlowGate(
            flow: flow, running: try runningUnderLiveLeases(flow: flow, now: now, db),
            inPool: flow.pool == nil ? 0 : try runningUnderLiveLeases(pool: pool, now: now, db), paused: paused)
        let counter = try KeyCounter(now: now, db)
        let starts = flow.rates.isEmpty ? nil : try RateStarts(now: now, db)
        /// The jobs taken, with their rows when the walk read them whole.
        var chosen: [(id: Int64, job: Job?)] = []
        /// The rate slot each rated job taken starts in.
        var rated: [Int64: FlowGate.Slot] = [:]
        /// Takes the job if the gate admits it, its key counted first if not yet.
        func offer(id: Int64, definition: String, key: String, job: Job? = nil) throws {
            let slot = FlowGate.Slot(definition: definition, key: key)
            let uncounted = gate.uncounted([slot])
            if !uncounted.isEmpty { gate.count(try counter.count(uncounted)) }
            if let starts {
                let unstarted = gate.uncountedRates([slot])
                if !unstarted.isEmpty { gate.countStarts(try starts.count(unstarted, rates: flow.rates)) }
            }
            guard gate.admit(definition: definition, key: key) else { return }
            chosen.append((id, job))
            if let rate = flow.rates[definition] {
                rated[id] = FlowGate.Slot(definition: definition, key: rate.key(limitKey: key))
            }
        }
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
                    WHERE state = 'pending' AND waiting_on = 0 AND pool = ? AND run_at <= ? AND typeof(priority) = 'integer')
                ORDER BY priority DESC, turn, run_at, id
                """)
            for (index, definition) in fair.enumerated() { try statement.bind(Int32(index + 1), definition) }
            try statement.bind(Int32(fair.count + 1), pool)
            try statement.bind(Int32(fair.count + 2), now)
            let candidates = try statement.rows { row in
                (id: row.int64(0), definition: row.text(1) ?? "", key: row.text(2) ?? "")
            }
            for candidate in candidates where chosen.count < limit {
                try offer(id: candidate.id, definition: candidate.definition, key: candidate.key)
            }
        } else {
            // Whole rows: the jobs taken need no second read. The limit key
            // comes after the job's columns.
            let keyColumn = Int32(Columns.jobNames.count)
            let first = try RawStatement(
                db,
                """
                SELECT \(Columns.job), coalesce(limit_key, '') FROM jobs INDEXED BY jobs_claim
                WHERE state = 'pending' AND waiting_on = 0 AND pool = ? AND run_at <= ? AND typeof(priority) = 'integer'
                ORDER BY priority DESC, run_at, id
                LIMIT ?
                """)
            let after = try RawStatement(
                db,
                """
                SELECT \(Columns.job), coalesce(limit_key, '') FROM jobs INDEXED BY jobs_claim
                WHERE state = 'pending' AND waiting_on = 0 AND pool = ? AND run_at <= ? AND typeof(priority) = 'integer'
                    AND (priority < ? OR (priority = ? AND (run_at > ? OR (run_at = ? AND id > ?))))
                ORDER BY priority DESC, run_at, id
                LIMIT ?
                """)
            var last: (priority: Int64, runAt: String, id: Int64)?
            var pageSize = min(flowPage, limit * 2)
            while chosen.count < limit {
                let statement: RawStatement
                if let last {
                    statement = after
                    try statement.bind(3, last.priority)
                    try statement.bind(4, last.priority)
                    try statement.bind(5, last.runAt)
                    try statement.bind(6, last.runAt)
                    try statement.bind(7, last.id)
                    try statement.bind(8, pageSize)
                } else {
                    statement = first
                    try statement.bind(3, pageSize)
                }
                try statement.bind(1, pool)
                try statement.bind(2, now)
                // A row that cannot be decoded is read again, and quarantined, if
                // taken. Columns 4 and 14 of `Columns.job`: priority, run_at.
                let page = try statement.rows { row in
                    (
                        id: row.int64(0), definition: row.text(1) ?? "", key: row.text(keyColumn) ?? "",
                        priority: row.int64(4), runAt: row.text(14) ?? "", job: try? Columns.job(row)
                    )
                }
                for candidate in page where chosen.count < limit {
                    try offer(
                        id: candidate.id, definition: candidate.definition, key: candidate.key, job: candidate.job)
                }
                guard page.count == pageSize, let end = page.last else { break }
                last = (end.priority, end.runAt, end.id)
                pageSize = flowPage
            }
        }
        let read = try RawStatement(db, "SELECT \(Columns.job) FROM jobs WHERE id = ?")
        var jobs: [Job] = []
        for (id, job) in chosen {
            if let job {
                jobs.append(job)
                continue
            }
            try read.bind(1, id)
            do {
                if let job = try read.firstRow(Columns.job) { jobs.append(job) }
            } catch let error as JobStoreError where error.code == .badRow {
                try quarantine(error, jobID: id, now: now, db)
            }
        }
        let taken = try take(jobs, owner: owner, leaseDuration: leaseDuration, nowMs: nowMs, db)
        if let starts, !rated.isEmpty {
            try starts.record(
                taken.compactMap { claimed in rated[claimed.job.id].map { (claimed.job.id, $0) } },
                rates: flow.rates, nowMs: nowMs)
        }
        return taken
    }

    /// The running jobs under live leases of each of `flow`'s definitions
    /// with a global limit (the others need none).
    private static func runningUnderLiveLeases(flow: ClaimFlow, now: String, _ db: Database) throws -> [String: Int] {
        let statement = try RawStatement(
            db,
            """
            SELECT count(*) FROM jobs INDEXED BY jobs_running_limit
            WHERE state = 'running' AND limit_key IS NOT NULL AND definition = ? AND lease_expires_at > ?
            """)
        var running: [String: Int] = [:]
        for (definition, limit) in flow.limits where limit.global != nil {
            try statement.bind(1, definition)
            try statement.bind(2, now)
            running[definition] = try statement.firstRow { $0.int(0) } ?? 0
        }
        return running
    }

    /// The running jobs under live leases of `pool` that have a limit key.
    private static func runningUnderLiveLeases(pool: String, now: String, _ db: Database) throws -> Int {
        let statement = try RawStatement(
            db,
            """
            SELECT count(*) FROM jobs
            WHERE state = 'running' AND pool = ? AND limit_key IS NOT NULL AND lease_expires_at > ?
            """)
        try statement.bind(1, pool)
        try statement.bind(2, now)
        return try statement.firstRow { $0.int(0) } ?? 0
    }

    /// Counts the running jobs under live leases of limit keys.
    private struct KeyCounter {
        let statement: RawStatement
        let now: String

        init(now: String, _ db: Database) throws {
            self.now = now
            statement = try RawStatement(
                db,
                """
                SELECT count(*) FROM jobs INDEXED BY jobs_running_limit
                WHERE state = 'running' AND definition = ? AND limit_key = ? AND lease_expires_at > ?
                """)
        }

        func count(_ slots: [FlowGate.Slot]) throws -> [FlowGate.Slot: Int] {
            var running: [FlowGate.Slot: Int] = [:]
            for slot in slots {
                try statement.bind(1, slot.definition)
                try statement.bind(2, slot.key)
                try statement.bind(3, now)
                running[slot] = try statement.firstRow { $0.int(0) } ?? 0
            }
            return running
        }
    }
}
