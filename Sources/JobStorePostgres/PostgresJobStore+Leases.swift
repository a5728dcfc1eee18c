import Foundation
import JobStore
import JobValues
internal import PostgresNIO

extension PostgresJobStore {
    public func claim(
        pool: String, owner: String, limit: Int, leaseDuration: Duration, flow: ClaimFlow,
        completion: @escaping @Sendable (Result<[ClaimedJob], any Error>) -> Void
    ) {
        guard flow.isUnlimited else {
            Task {
                do {
                    try JobStoreError.checkClaim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration)
                    completion(
                        .success(
                            try await claimLimited(
                                pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration, flow: flow)))
                } catch {
                    completion(.failure(error))
                }
            }
            return
        }
        writer.enqueue(
            atomic: false,
            { session in
                try JobStoreError.checkClaim(pool: pool, owner: owner, limit: limit, leaseDuration: leaseDuration)
                // SKIP LOCKED: jobs another host is claiming right now are left
                // to it, without waiting for its transaction.
                let jobs = try await session.rows(
                    """
                    WITH picked AS (
                        SELECT id AS picked_id FROM {s}.jobs
                        WHERE state = 'pending' AND waiting_on = 0 AND pool = $1 AND run_at <= now() AND \(Self.notPaused)
                        ORDER BY priority DESC, run_at, id
                        LIMIT $2
                        FOR UPDATE SKIP LOCKED)
                    UPDATE {s}.jobs
                    SET state = 'running', lease_owner = $3, lease_expires_at = now() + $4::float8 * interval '1 millisecond',
                        claims = claims + 1, started_at = coalesce(started_at, now())
                    FROM picked WHERE id = picked_id
                    RETURNING \(PostgresQueryColumns.job)
                    """,
                    pool, limit, owner, Double(leaseDuration.milliseconds), decode: PostgresQueryColumns.job
                ).sorted { ($0.priority, $1.runAt, $1.id) > ($1.priority, $0.runAt, $0.id) }
                guard !jobs.isEmpty else { return [] }
                let stages = try await Self.stages(of: jobs.map(\.id), session)
                return jobs.map { job in
                    let lease = Lease(
                        jobID: job.id, owner: owner, claim: job.claims, expiresAt: job.leaseExpiresAt ?? job.runAt)
                    return ClaimedJob(job: job, stages: stages[job.id] ?? [], lease: lease)
                }
            }, completion: completion)
    }

    /// The stages of `jobs`, in order, by job.
    static func stages(of jobs: [Int64], _ session: PostgresSession) async throws -> [Int64: [Stage]] {
        let stages = try await session.rows(
            "SELECT \(PostgresQueryColumns.stage) FROM {s}.stages WHERE job_id = ANY($1) ORDER BY job_id, position",
            jobs, decode: PostgresQueryColumns.stage)
        return Dictionary(grouping: stages, by: \.jobID)
    }

    /// Renews outside the writer's queue, on a connection of its own, and
    /// passes over a job whose row another session has locked (an
    /// operator's `SELECT … FOR UPDATE`, a host requeueing it): such a
    /// lease is neither renewed nor lost this time (``LeaseRenewal/heldUp``).
    /// So neither a locked row nor a write waiting for one holds up the
    /// renewal of the other leases. A statement unanswered for a third of
    /// the lease gives its connection up: the next renewal gets another.
    public func renew(
        _ leases: [Lease], leaseDuration: Duration,
        completion: @escaping @Sendable (Result<LeaseRenewal, any Error>) -> Void
    ) {
        do {
            try JobStoreError.checkLeaseDuration(leaseDuration)
        } catch {
            return completion(.failure(error))
        }
        guard !leases.isEmpty else {
            return completion(.success(LeaseRenewal(renewed: [], lost: [], cancellationRequested: [])))
        }
        Task {
            do {
                completion(.success(try await renew(leases, leaseDuration: leaseDuration)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    private func renew(_ leases: [Lease], leaseDuration: Duration) async throws -> LeaseRenewal {
        let rows = try await read(doing: "renew leases", silence: Self.silence(renewing: leaseDuration)) { session in
            try await session.rows(
                """
                WITH lease AS (
                    SELECT * FROM unnest($2::int8[], $3::text[], $4::int8[]) AS lease(job_id, owner, claim)),
                mine AS (
                    SELECT id FROM {s}.jobs JOIN lease ON id = lease.job_id
                    WHERE state = 'running' AND lease_owner = lease.owner AND claims = lease.claim
                    FOR NO KEY UPDATE OF jobs SKIP LOCKED),
                renewed AS (
                    UPDATE {s}.jobs SET lease_expires_at = now() + $1::float8 * interval '1 millisecond'
                    FROM mine WHERE jobs.id = mine.id
                    RETURNING jobs.id, cancel_requested, lease_expires_at)
                SELECT lease.job_id, renewed.id IS NOT NULL, coalesce(renewed.cancel_requested, false),
                       renewed.lease_expires_at,
                       renewed.id IS NULL AND EXISTS (
                           SELECT 1 FROM {s}.jobs WHERE id = lease.job_id AND state = 'running'
                           AND lease_owner = lease.owner AND claims = lease.claim)
                FROM lease LEFT JOIN renewed ON renewed.id = lease.job_id
                """,
                Double(leaseDuration.milliseconds), leases.map(\.jobID), leases.map(\.owner),
                leases.map { Int64($0.claim) }
            ) { row -> (Int64, (renewed: Bool, cancel: Bool, expiry: Date?, locked: Bool)) in
                let row = PostgresIndexedRow(row)
                return (try row.int64(0), (try row.bool(1), try row.bool(2), try row.date(3), try row.bool(4)))
            }
        }
        let byID = Dictionary(rows, uniquingKeysWith: { first, _ in first })
        var renewal = LeaseRenewal(renewed: [], lost: [], cancellationRequested: [])
        for lease in leases {
            guard let row = byID[lease.jobID], row.renewed else {
                // Still ours, its row locked by another session: looked at again next time.
                if byID[lease.jobID]?.locked == true {
                    renewal.heldUp.append(lease.jobID)
                } else {
                    renewal.lost.append(lease.jobID)
                }
                continue
            }
            var renewed = lease
            renewed.expiresAt = row.expiry ?? lease.expiresAt
            renewal.renewed.append(renewed)
            if row.cancel { renewal.cancellationRequested.append(lease.jobID) }
        }
        return renewal
    }

    /// How long renewing a lease of `duration` may wait for an answer
    /// before its connection counts as silent: a third of it (at least 1 s),
    /// so that the next renewal, on a new connection, still comes in time.
    static func silence(renewing duration: Duration) -> Duration {
        max(.seconds(1), duration / 3)
    }

    public func requeueExpiredLeases(
        sparing: [Lease], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void
    ) {
        let spared = Set(sparing.map(SparedLease.init))
        writer.enqueue(
            atomic: true,
            { session in
                // Jobs whose writer holds a lock now are alive: skipped, looked at next time.
                let expired = try await session.rows(
                    """
                    SELECT id, cancel_requested, lease_owner, lease_expires_at, pool, claims FROM {s}.jobs
                    WHERE state = 'running' AND lease_expires_at < now()
                    ORDER BY id
                    FOR UPDATE SKIP LOCKED
                    """
                ) { row -> (id: Int64, cancel: Bool, owner: String, expiry: String, pool: String, claim: Int) in
                    let row = PostgresIndexedRow(row)
                    return (
                        try row.int64(0), try row.bool(1), try row.text(2) ?? "?",
                        try row.date(3).map(Timestamp.text) ?? "?", try row.text(4) ?? "", try row.int(5)
                    )
                }.filter { !spared.contains(SparedLease(jobID: $0.id, owner: $0.owner, claim: $0.claim)) }
                var pools: Set<String> = []
                for job in expired {
                    if job.cancel {
                        try await Self.resolveStages(of: job.id, as: .cancelled, session)
                        try await session.execute(
                            """
                            UPDATE {s}.jobs SET state = 'cancelled', lease_expires_at = NULL, finished_at = now(),
                                error = 'cancelled: its lease expired while a cancellation was requested'
                            WHERE id = $1
                            """, job.id)
                        try await Self.insertEvent(
                            .cancelledAtExpiry(job.id, owner: job.owner, expiry: job.expiry), session)
                        try await Self.cancelChildren(
                            of: job.id, stage: nil, reason: JobStoreError.parentEndedMessage(job.id), session)
                        try await Self.childrenEnded([(job.id, .cancelled)], session)
                        try await Self.dependenciesEnded([(job.id, .cancelled)], session)
                    } else {
                        try await session.execute(
                            "UPDATE {s}.jobs SET state = 'pending', lease_expires_at = NULL WHERE id = $1", job.id)
                        try await session.execute(
                            "UPDATE {s}.stages SET state = 'pending' WHERE job_id = $1 AND state = 'running'", job.id)
                        try await Self.insertEvent(.requeued(job.id, owner: job.owner, expiry: job.expiry), session)
                        pools.insert(job.pool)
                    }
                }
                for pool in pools.sorted() { try await session.notify(.runnable(pool: pool)) }
                return expired.map(\.id)
            }, completion: completion)
    }

    public func leaseOwners() async throws -> [String: Int] {
        try await read(doing: "read lease owners") { session in
            let rows = try await session.rows(
                "SELECT lease_owner, count(*) FROM {s}.jobs WHERE state = 'running' AND lease_owner IS NOT NULL GROUP BY lease_owner"
            ) { row in (try PostgresIndexedRow(row).text(0) ?? "", try PostgresIndexedRow(row).int(1)) }
            return Dictionary(rows, uniquingKeysWith: +)
        }
    }

    public func expireLeases(of owners: [String]) async throws -> Int {
        guard !owners.isEmpty else { return 0 }
        return try await write(atomic: false) { session in
            try await session.execute(
                """
                UPDATE {s}.jobs SET lease_expires_at = now() - interval '1 millisecond'
                WHERE state = 'running' AND lease_owner = ANY($1)
                RETURNING 1
                """, owners)
        }
    }
}
