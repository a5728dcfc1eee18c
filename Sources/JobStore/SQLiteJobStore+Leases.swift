import Foundation
internal import GRDB

extension SQLiteJobStore {
    public func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration,
        completion: @escaping @Sendable (Result<[ClaimedJob], any Error>) -> Void
    ) {
        // Not in a savepoint (a hot path): the only change is the updates by
        // key at the end, which fail only in ways that roll back everything.
        writer.enqueue(atomic: false, { db in
            try JobStoreError.checkClaim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration)
            return try Self.claim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, db)
        }, completion: completion)
    }

    private static func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, _ db: Database
    ) throws -> [ClaimedJob] {
        let nowMs = Timestamp.milliseconds(Date())
        let now = Timestamp.text(milliseconds: nowMs)
        let expiresMs = nowMs + leaseDuration.milliseconds
        // Priority levels first, highest first — a skip scan of `jobs_claim`,
        // one seek per level — then, level by level, the runnable jobs of the
        // level in `run_at` order: one range of the index each. A single
        // query ordered by (priority DESC, run_at) walks every pending entry
        // of the pool when none is runnable: with 100,000 delayed jobs, each
        // claim read 100,000 index entries.
        // Read the jobs, then take each by key: `RETURNING` would cost a
        // temporary table, and a second read is not needed to know the result.
        let top = try RawStatement(db, "SELECT max(priority) FROM jobs INDEXED BY jobs_claim WHERE state = 'pending' AND pool = ?")
        let below = try RawStatement(db, """
            SELECT max(priority) FROM jobs INDEXED BY jobs_claim WHERE state = 'pending' AND pool = ? AND priority < ?
            """)
        let next = try RawStatement(db, """
            SELECT \(Columns.job) FROM jobs INDEXED BY jobs_claim
            WHERE state = 'pending' AND pool = ? AND priority = ? AND run_at <= ?
            ORDER BY run_at, id
            LIMIT ?
            """)
        try top.bind(1, pool)
        var level = try top.firstRow { $0.isNull(0) ? nil : $0.int64(0) } ?? nil
        var jobs: [Job] = []
        while let priority = level, jobs.count < limit {
            try next.bind(1, pool)
            try next.bind(2, priority)
            try next.bind(3, now)
            try next.bind(4, limit - jobs.count)
            jobs += try next.rows(Columns.job)
            guard jobs.count < limit else { break }
            try below.bind(1, pool)
            try below.bind(2, priority)
            level = try below.firstRow { $0.isNull(0) ? nil : $0.int64(0) } ?? nil
        }
        let take = try RawStatement(db, """
            UPDATE jobs
            SET state = 'running', lease_owner = ?, lease_expires_at = ?, claims = claims + 1,
                started_at = coalesce(started_at, ?)
            WHERE id = ?
            """)
        let expires = Timestamp.text(milliseconds: expiresMs)
        let expiresAt = Timestamp.date(milliseconds: expiresMs)
        let startedAt = Timestamp.date(now)
        return try jobs.map { pending in
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
            return ClaimedJob(job: job, stages: try Columns.stages(of: job.id, db), lease: lease)
        }
    }

    public func renew(
        _ leases: [Lease], leaseDuration: Duration,
        completion: @escaping @Sendable (Result<LeaseRenewal, any Error>) -> Void
    ) {
        writer.enqueue(atomic: true, { db in
            try JobStoreError.checkLeaseDuration(leaseDuration)
            let expiresMs = Timestamp.milliseconds(Date()) + leaseDuration.milliseconds
            let expires = Timestamp.text(milliseconds: expiresMs)
            let check = try RawStatement(
                db, "SELECT cancel_requested FROM jobs WHERE id = ? AND state = 'running' AND lease_owner = ? AND claims = ?")
            let extend = try RawStatement(db, "UPDATE jobs SET lease_expires_at = ? WHERE id = ?")
            var renewal = LeaseRenewal(renewed: [], lost: [], cancellationRequested: [])
            for lease in leases {
                try check.bind(1, lease.jobID)
                try check.bind(2, lease.owner)
                try check.bind(3, lease.claim)
                guard let cancel = try check.firstRow({ $0.bool(0) }) else {
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
        writer.enqueue(atomic: true, { db in
            let now = Timestamp.now()
            let expired = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, cancel_requested, lease_owner, lease_expires_at, claims FROM jobs
                    WHERE state = 'running' AND lease_expires_at < ?
                    """,
                arguments: [now]
            ).filter { !spared.contains(SparedLease(jobID: $0[0], owner: $0[2] ?? "", claim: $0[4])) }
            for row in expired {
                let id: Int64 = row[0]
                let cancel: Bool = row[1]
                let owner: String = row[2] ?? "?"
                let expiry: String = row[3] ?? "?"
                if cancel {
                    try Self.resolveStages(of: id, as: .cancelled, db)
                    try db.execute(
                        sql: """
                            UPDATE jobs SET state = 'cancelled', lease_expires_at = NULL, finished_at = ?,
                                error = 'cancelled: its lease expired while a cancellation was requested'
                            WHERE id = ?
                            """,
                        arguments: [now, id])
                    try Self.insertEvent(.cancelledAtExpiry(id, owner: owner, expiry: expiry), db)
                } else {
                    try db.execute(
                        sql: "UPDATE jobs SET state = 'pending', lease_expires_at = NULL WHERE id = ?",
                        arguments: [id])
                    try db.execute(
                        sql: "UPDATE stages SET state = 'pending' WHERE job_id = ? AND state = 'running'",
                        arguments: [id])
                    try Self.insertEvent(.requeued(id, owner: owner, expiry: expiry), db)
                }
            }
            return expired.map { $0[0] }
        }, completion: completion)
    }

    public func leaseOwners() async throws -> [String: Int] {
        try await read(doing: "read lease owners") { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT lease_owner, count(*) FROM jobs WHERE state = 'running' AND lease_owner IS NOT NULL GROUP BY lease_owner")
            return Dictionary(uniqueKeysWithValues: rows.map { (row: Row) -> (String, Int) in (row[0], row[1]) })
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
