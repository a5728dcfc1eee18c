import Foundation
internal import GRDB
internal import GRDBSQLite
import JobStore
import JobValues

extension SQLiteJobStore {
    public func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow,
        completion: @escaping @Sendable (Result<[ClaimedJob], any Error>) -> Void
    ) {
        // Not in a savepoint (a hot path): the only change is the updates by
        // key at the end, which fail only in ways that roll back everything.
        writer.enqueue(
            atomic: false,
            { db in
                try JobStoreError.checkClaim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration)
                // Pauses are few (none, most of the time): one read of a
                // tiny table, and the plain claim when nothing is paused.
                let paused = try Self.pausedClaims(pool: pool, now: Timestamp.now(), db)
                if paused.pool { return [] }
                guard flow.isUnlimited && paused.definitions.isEmpty else {
                    return try Self.claimLimited(
                        pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, flow: flow,
                        paused: paused.definitions, db)
                }
                return try Self.claim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, db)
            }, completion: completion)
    }

    private static func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, _ db: Database
    ) throws -> [ClaimedJob] {
        let nowMs = Timestamp.milliseconds(Date())
        let now = Timestamp.text(milliseconds: nowMs)
        // Priority levels first, highest first — a skip scan of `jobs_claim`,
        // one seek per level — then, level by level, the runnable jobs of the
        // level in `run_at` order: one range of the index each. A single
        // query ordered by (priority DESC, run_at) walks every pending entry
        // of the pool when none is runnable: with 100,000 delayed jobs, each
        // claim read 100,000 index entries.
        // Read the jobs, then take each by key: `RETURNING` would cost a
        // temporary table, and a second read is not needed to know the result.
        let top = try RawStatement(
            db,
            "SELECT max(priority) FROM jobs INDEXED BY jobs_claim WHERE state = 'pending' AND waiting_on = 0 AND pool = ?"
        )
        let below = try RawStatement(
            db,
            """
            SELECT max(priority) FROM jobs INDEXED BY jobs_claim WHERE state = 'pending' AND waiting_on = 0 AND pool = ? AND priority < ?
            """)
        let next = try RawStatement(
            db,
            """
            SELECT \(Columns.job) FROM jobs INDEXED BY jobs_claim
            WHERE state = 'pending' AND waiting_on = 0 AND pool = ? AND priority = ? AND run_at <= ?
            ORDER BY run_at, id
            LIMIT ?
            """)
        // A priority written by hand that is not an integer sorts above
        // every integer in the index (text, BLOB) or between two (a real):
        // read as a level it would hide the jobs of the levels below it.
        // Such jobs are quarantined, and the level read again.
        func readLevel(_ statement: RawStatement, under below: Int64?) throws -> Int64? {
            while true {
                try statement.bind(1, pool)
                if let below { try statement.bind(2, below) }
                // max() always gives one row: NULL when the range is empty.
                let found = try statement.firstRow { row -> PriorityLevel in
                    switch row.type(0) {
                    case SQLITE_NULL: .none
                    case SQLITE_INTEGER: .level(row.int64(0))
                    default: .unordered
                    }
                }
                switch found ?? PriorityLevel.none {
                case .none: return nil
                case .level(let level): return level
                case .unordered: break
                }
                try quarantineUnorderedPriorities(pool: pool, now: now, db)
            }
        }
        var level = try readLevel(top, under: nil)
        var jobs: [Job] = []
        while let priority = level, jobs.count < limit {
            // A row that cannot be read is quarantined (it leaves the
            // pending index) and the level read anew, until a read meets
            // no such row (or one it could not set aside).
            var found: [Job]
            var retry = false
            repeat {
                var unreadable: [JobStoreError] = []
                try next.bind(1, pool)
                try next.bind(2, priority)
                try next.bind(3, now)
                try next.bind(4, limit - jobs.count)
                found = try next.rows(Columns.job, skipping: &unreadable)
                retry = !unreadable.isEmpty
                for error in unreadable {
                    if try !quarantine(error, now: now, db) { retry = false }
                }
            } while retry
            jobs += found
            guard jobs.count < limit else { break }
            level = try readLevel(below, under: priority)
        }
        return try take(jobs, owner: owner, leaseDuration: leaseDuration, nowMs: nowMs, db)
    }

    /// Puts `jobs` (pending, just read) under leases of `owner`, with their
    /// stages; a job whose stages cannot be read is quarantined instead.
    static func take(
        _ jobs: [Job], owner: String, leaseDuration: Duration, nowMs: Int64, _ db: Database
    ) throws -> [ClaimedJob] {
        let now = Timestamp.text(milliseconds: nowMs)
        let expiresMs = nowMs + leaseDuration.milliseconds
        let take = try RawStatement(
            db,
            """
            UPDATE jobs
            SET state = 'running', lease_owner = ?, lease_expires_at = ?, claims = claims + 1,
                started_at = coalesce(started_at, ?)
            WHERE id = ?
            """)
        let expires = Timestamp.text(milliseconds: expiresMs)
        let expiresAt = Timestamp.date(milliseconds: expiresMs)
        let startedAt = Timestamp.date(now)
        return try jobs.compactMap { pending in
            let stages: [Stage]
            do {
                stages = try Columns.stages(of: pending.id, db)
            } catch let error as JobStoreError where error.code == .badRow {
                try quarantine(error, jobID: pending.id, now: now, db)
                return nil
            }
            try take.bind(1, owner)
            try take.bind(2, expires)
            try take.bind(3, now)
            try take.bind(4, pending.id)
            try take.execute()
            var job = pending
            job.state = .running
            job.leaseOwner = owner
            job.leaseExpiresAt = expiresAt
            job.claims += 1
            job.startedAt = job.startedAt ?? startedAt
            let lease = Lease(jobID: job.id, owner: owner, claim: job.claims, expiresAt: expiresAt)
            return ClaimedJob(job: job, stages: stages, lease: lease)
        }
    }

    private enum PriorityLevel {
        case none, level(Int64), unordered
    }

    /// Rejects the pending jobs of `pool` whose priority is not an integer
    /// (see ``Quarantine``).
    private static func quarantineUnorderedPriorities(pool: String, now: String, _ db: Database) throws {
        let select = try RawStatement(
            db,
            """
            SELECT id FROM jobs INDEXED BY jobs_claim
            WHERE state = 'pending' AND waiting_on = 0 AND pool = ? AND typeof(priority) != 'integer'
            """)
        try select.bind(1, pool)
        let statement = try RawStatement(db, "SELECT \(Columns.job) FROM jobs WHERE id = ?")
        for id in try select.rows({ $0.int64(0) }) {
            try statement.bind(1, id)
            do {
                _ = try statement.firstRow(Columns.job)
            } catch let error as JobStoreError where error.code == .badRow {
                try quarantine(error, now: now, db)
            }
        }
    }

    /// Rejects a job whose row, or one of its stages' rows, cannot be read
    /// (see ``Quarantine``); a job already ended is left as it is.
    /// Whether it did.
    @discardableResult
    static func quarantine(_ error: JobStoreError, jobID: Int64? = nil, now: String, _ db: Database) throws -> Bool {
        guard let id = jobID ?? error.jobID else { return false }
        let reject = try RawStatement(
            db,
            """
            UPDATE jobs SET state = 'rejected', lease_expires_at = NULL, finished_at = ?, error = ?
            WHERE id = ? AND state IN ('pending', 'running')
            """)
        try reject.bind(1, now)
        try reject.bind(2, Quarantine.error(error))
        try reject.bind(3, id)
        try reject.execute()
        guard db.changesCount > 0 else { return false }
        try resolveStages(of: id, as: .rejected, db)
        _ = try cancelChildren(of: id, stage: nil, reason: JobStoreError.parentEndedMessage(id), now: now, db)
        _ = try jobsEnded([id], as: .rejected, db)
        try insertEvent(.quarantined(id, error), db)
        return true
    }

    public func renew(
        _ leases: [Lease], leaseDuration: Duration,
        completion: @escaping @Sendable (Result<LeaseRenewal, any Error>) -> Void
    ) {
        writer.enqueue(
            atomic: true,
            { db in
                try JobStoreError.checkLeaseDuration(leaseDuration)
                let expiresMs = Timestamp.milliseconds(Date()) + leaseDuration.milliseconds
                let expires = Timestamp.text(milliseconds: expiresMs)
                let check = try RawStatement(
                    db,
                    "SELECT cancel_requested FROM jobs WHERE id = ? AND state = 'running' AND lease_owner = ? AND claims = ?"
                )
                let extend = try RawStatement(db, "UPDATE jobs SET lease_expires_at = ? WHERE id = ?")
                var renewal = LeaseRenewal(renewed: [], lost: [], cancellationRequested: [])
                for lease in leases {
                    try check.bind(1, lease.jobID)
                    try check.bind(2, lease.owner)
                    try check.bind(3, lease.claim)
                    // A flag that cannot be read (written by hand) ends the lease:
                    // the run stops, and the requeue pass quarantines the job.
                    let flag = try check.firstRow { raw -> Bool? in
                        var row = CheckedRow(raw, table: "jobs", names: ["cancel_requested"])
                        row.identify([])
                        return try? row.bool(0)
                    }
                    guard let flag, let cancel = flag else {
                        renewal.lost.append(lease.jobID)
                        continue
                    }
                    try extend.bind(1, expires)
                    try extend.bind(2, lease.jobID)
                    try extend.execute()
                    var renewed = lease
                    renewed.expiresAt = Timestamp.date(milliseconds: expiresMs)
                    renewal.renewed.append(renewed)
                    if cancel { renewal.cancellationRequested.append(lease.jobID) }
                }
                return renewal
            }, completion: completion)
    }

    public func requeueExpiredLeases(
        sparing: [Lease], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void
    ) {
        let spared = Set(sparing.map(SparedLease.init))
        writer.enqueue(
            atomic: true,
            { db in
                let now = Timestamp.now()
                let select = try RawStatement(
                    db,
                    """
                    SELECT id, cancel_requested, lease_owner, lease_expires_at, claims FROM jobs
                    WHERE state = 'running' AND lease_expires_at < ?
                    """)
                try select.bind(1, now)
                var unreadable: [JobStoreError] = []
                let expired = try select.rows(
                    { raw in
                        var row = CheckedRow(
                            raw, table: "jobs",
                            names: ["id", "cancel_requested", "lease_owner", "lease_expires_at", "claims"])
                        row.identify([0], jobColumn: 0)
                        return ExpiredLease(
                            id: try row.integer(0), cancel: try row.bool(1), owner: try row.text(2) ?? "?",
                            expiry: try row.text(3) ?? "?", claim: try row.count(4))
                    }, skipping: &unreadable
                )
                .filter { !spared.contains(SparedLease(jobID: $0.id, owner: $0.owner, claim: $0.claim)) }
                for error in unreadable { try Self.quarantine(error, now: now, db) }
                for lease in expired {
                    let id = lease.id
                    if lease.cancel {
                        try Self.resolveStages(of: id, as: .cancelled, db)
                        try db.execute(
                            sql: """
                                UPDATE jobs SET state = 'cancelled', lease_expires_at = NULL, finished_at = ?,
                                    error = 'cancelled: its lease expired while a cancellation was requested'
                                WHERE id = ?
                                """,
                            arguments: [now, id])
                        try Self.insertEvent(.cancelledAtExpiry(id, owner: lease.owner, expiry: lease.expiry), db)
                        _ = try Self.cancelChildren(
                            of: id, stage: nil, reason: JobStoreError.parentEndedMessage(id), now: now, db)
                        _ = try Self.jobsEnded([id], as: .cancelled, db)
                    } else {
                        try db.execute(
                            sql: "UPDATE jobs SET state = 'pending', lease_expires_at = NULL WHERE id = ?",
                            arguments: [id])
                        try db.execute(
                            sql: "UPDATE stages SET state = 'pending' WHERE job_id = ? AND state = 'running'",
                            arguments: [id])
                        try Self.insertEvent(.requeued(id, owner: lease.owner, expiry: lease.expiry), db)
                    }
                }
                return expired.map(\.id)
            }, completion: completion)
    }

    private struct ExpiredLease {
        var id: Int64
        var cancel: Bool
        var owner: String
        var expiry: String
        var claim: Int
    }

    /// Running jobs by lease owner. A row whose owner is not text (a BLOB
    /// written by hand) is left out: no jobd holds a lease under it, and the
    /// requeue pass quarantines it once its lease has expired.
    public func leaseOwners() async throws -> [String: Int] {
        try await read(doing: "read lease owners") { db in
            let statement = try RawStatement(
                db,
                "SELECT lease_owner, count(*) FROM jobs WHERE state = 'running' AND lease_owner IS NOT NULL GROUP BY lease_owner"
            )
            var unreadable: [JobStoreError] = []
            let counts = try statement.rows(
                { raw in
                    let row = CheckedRow(raw, table: "jobs", names: ["lease_owner", "count(*)"])
                    return (try row.requiredText(0), Int(try row.integer(1)))
                }, skipping: &unreadable)
            // Distinct in SQL may still be one string in Swift (text and its
            // bytes in another encoding are distinct to SQLite): add them up.
            return Dictionary(counts, uniquingKeysWith: +)
        }
    }

    public func expireLeases(of owners: [String]) async throws -> Int {
        guard !owners.isEmpty else { return 0 }
        return try await write(atomic: true) { db in
            // One millisecond in the past: expired for `requeueExpiredLeases`.
            let past = Timestamp.text(milliseconds: Timestamp.milliseconds(Date()) - 1)
            var ended = 0
            for owner in owners {
                try db.execute(
                    sql: "UPDATE jobs SET lease_expires_at = ? WHERE state = 'running' AND lease_owner = ?",
                    arguments: [past, owner])
                ended += db.changesCount
            }
            return ended
        }
    }
}
