import Foundation
import GRDB

extension SQLiteJobStore {
    public func claim(pool: String, owner: String, limit: Int, leaseDuration: Duration) async throws -> [ClaimedJob] {
        try Self.require(!pool.isEmpty, "claim needs a pool name")
        try Self.require(!owner.isEmpty, "claim needs a lease owner (a name unique to this process)")
        try Self.require(limit > 0, "claim limit must be positive, not \(limit)")
        try Self.require(leaseDuration > .zero, "a lease must last more than zero, not \(leaseDuration)")
        guard limit > 0 else { return [] }
        return try await write(atomic: true) { db in
            try Self.claim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, db)
        }
    }

    private static func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, _ db: Database
    ) throws -> [ClaimedJob] {
        let nowMs = Timestamp.milliseconds(Date())
        let now = Timestamp.text(milliseconds: nowMs)
        let expiresMs = nowMs + leaseDuration.milliseconds
        let claim = try db.cachedStatement(sql: """
            UPDATE jobs
            SET state = 'running', lease_owner = ?1, lease_expires_at = ?2, claims = claims + 1,
                started_at = coalesce(started_at, ?3)
            WHERE id IN (
                SELECT id FROM jobs
                WHERE state = 'pending' AND pool = ?4 AND run_at <= ?3
                ORDER BY priority DESC, run_at, id
                LIMIT ?5)
            RETURNING \(Columns.job)
            """)
        let rows = try Row.fetchAll(
            claim, arguments: [owner, Timestamp.text(milliseconds: expiresMs), now, pool, limit])
        // RETURNING gives no order: restore the claim order.
        let jobs = try rows.map(Columns.job).sorted {
            ($0.priority, $1.runAt, $1.id) > ($1.priority, $0.runAt, $0.id)
        }
        let stagesOf = try db.cachedStatement(
            sql: "SELECT \(Columns.stage) FROM stages WHERE job_id = ? ORDER BY position")
        return try jobs.map { job in
            let stages = try Row.fetchAll(stagesOf, arguments: [job.id]).map(Columns.stage)
            let lease = Lease(
                jobID: job.id, owner: owner, claim: job.claims, expiresAt: Timestamp.date(milliseconds: expiresMs))
            return ClaimedJob(job: job, stages: stages, lease: lease)
        }
    }

    public func renew(_ leases: [Lease], leaseDuration: Duration) async throws -> LeaseRenewal {
        try Self.require(leaseDuration > .zero, "a lease must last more than zero, not \(leaseDuration)")
        guard !leases.isEmpty else { return LeaseRenewal(renewed: [], lost: [], cancellationRequested: []) }
        return try await write(atomic: true) { db in
            let expiresMs = Timestamp.milliseconds(Date()) + leaseDuration.milliseconds
            let expires = Timestamp.text(milliseconds: expiresMs)
            let renew = try db.cachedStatement(sql: """
                UPDATE jobs SET lease_expires_at = ?
                WHERE id = ? AND state = 'running' AND lease_owner = ? AND claims = ?
                RETURNING cancel_requested
                """)
            var renewal = LeaseRenewal(renewed: [], lost: [], cancellationRequested: [])
            for lease in leases {
                let cancel = try Bool.fetchOne(renew, arguments: [expires, lease.jobID, lease.owner, lease.claim])
                guard let cancel else {
                    renewal.lost.append(lease.jobID)
                    continue
                }
                var renewed = lease
                renewed.expiresAt = Timestamp.date(milliseconds: expiresMs)
                renewal.renewed.append(renewed)
                if cancel { renewal.cancellationRequested.append(lease.jobID) }
            }
            return renewal
        }
    }

    public func requeueExpiredLeases() async throws -> [Int64] {
        try await write(atomic: true) { db in
            let now = Timestamp.now()
            let expired = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, cancel_requested, lease_owner, lease_expires_at FROM jobs
                    WHERE state = 'running' AND lease_expires_at < ?
                    """,
                arguments: [now])
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
                    try Self.insertEvent(
                        NewEvent(jobID: id, kind: "cancelled",
                                 message: "lease of \(owner) expired at \(expiry) with a cancellation requested; job cancelled"),
                        db)
                } else {
                    try db.execute(
                        sql: "UPDATE jobs SET state = 'pending', lease_expires_at = NULL WHERE id = ?",
                        arguments: [id])
                    try db.execute(
                        sql: "UPDATE stages SET state = 'pending' WHERE job_id = ? AND state = 'running'",
                        arguments: [id])
                    try Self.insertEvent(
                        NewEvent(jobID: id, kind: "requeued",
                                 message: "lease of \(owner) expired at \(expiry); job requeued, it resumes at its first stage without a fulfilled result"),
                        db)
                }
            }
            return expired.map { $0[0] }
        }
    }
}
