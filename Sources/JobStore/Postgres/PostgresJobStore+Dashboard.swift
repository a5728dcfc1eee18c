import Foundation
internal import PostgresNIO

/// The dashboard's and the metrics' reads, as `SQLiteJobStore+Dashboard.swift`
/// has them: over every host's jobs, the database being shared.
extension PostgresJobStore {
    /// Jobs resolved per minute and state, for minutes from `start` (rounded
    /// down to its minute) to before `end`; minutes without any are absent.
    /// Reads the `jobs_finished` index for the range.
    public func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute] {
        let from = PGValue.time(Date(timeIntervalSince1970: (start.timeIntervalSince1970 / 60).rounded(.down) * 60))
        let to = PGValue.time(end)
        return try await read(doing: "count the jobs resolved per minute") { session in
            try await session.rows(
                """
                SELECT date_trunc('minute', finished_at) AS minute, state, count(*) FROM {s}.jobs
                WHERE finished_at >= $1::timestamptz AND finished_at < $2::timestamptz
                  AND state IN ('fulfilled', 'rejected', 'cancelled')
                GROUP BY minute, state ORDER BY minute, state
                """, from, to
            ) { row -> ResolvedMinute? in
                let row = PGRow(row)
                guard let minute = try row.date(0), let state = try row.text(1).flatMap(JobState.init(rawValue:)) else { return nil }
                return ResolvedMinute(minute: minute, state: state, count: try row.int(2))
            }.compactMap { $0 }
        }
    }

    /// Pending and running jobs by pool, pools in name order; a pool with
    /// neither is absent. Pending jobs are counted in the `jobs_claim` index.
    public func jobCountsByPool() async throws -> [PoolJobCounts] {
        try await read(doing: "count the jobs of each pool") { session in
            try await session.rows(
                """
                SELECT pool, count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'running')
                FROM {s}.jobs WHERE state IN ('pending', 'running')
                GROUP BY pool ORDER BY pool
                """
            ) { row in
                let row = PGRow(row)
                return PoolJobCounts(pool: try row.text(0) ?? "", pending: try row.int(1), running: try row.int(2))
            }
        }
    }
}
