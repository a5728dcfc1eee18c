import Foundation
internal import GRDB

/// How many jobs of one state were resolved in one minute (UTC).
public struct ResolvedMinute: Sendable, Hashable {
    /// The minute's start (seconds are 0).
    public var minute: Date
    public var state: JobState
    public var count: Int

    public init(minute: Date, state: JobState, count: Int) {
        self.minute = minute
        self.state = state
        self.count = count
    }
}

/// The unresolved jobs of one pool in the store (every host's, on a shared database).
public struct PoolJobCounts: Sendable, Hashable {
    public var pool: String
    public var pending: Int
    public var running: Int

    public init(pool: String, pending: Int, running: Int) {
        self.pool = pool
        self.pending = pending
        self.running = running
    }
}

/// Reads for the dashboard and the metrics. Not yet in the ``JobStore``
/// protocol: the PostgreSQL store will need the same two (there
/// `date_trunc('minute', finished_at)` and the same GROUP BYs).
extension SQLiteJobStore {
    /// Jobs resolved per minute and state, for minutes from `start` (rounded
    /// down to its minute) to before `end`; minutes without any are absent.
    ///
    /// Reads the `jobs_finished` index for the range, and each job's row for
    /// its state: the cost grows with the jobs resolved in the range (an hour
    /// of 100 jobs/s is 360,000 rows, a few hundred milliseconds).
    public func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute] {
        let startText = Timestamp.text(milliseconds: Timestamp.milliseconds(start) / 60_000 * 60_000)
        let endText = Timestamp.text(end)
        return try await read(doing: "count the jobs resolved per minute") { db in
            let statement = try RawStatement(db, Self.resolvedPerMinuteSQL)
            try statement.bind(1, startText)
            try statement.bind(2, endText)
            return try statement.rows { row -> ResolvedMinute? in
                guard let minuteText = row.text(0), let stateText = row.text(1),
                      let minute = Timestamp.date(minuteText + ":00Z"), let state = JobState(rawValue: stateText)
                else { return nil }
                return ResolvedMinute(minute: minute, state: state, count: row.int(2))
            }.compactMap { $0 }
        }
    }

    /// finished_at is fixed-width ISO-8601 text: its first 16 characters name
    /// the minute, and it orders like the time. Without `INDEXED BY`, SQLite
    /// picks `jobs_state` for the `state IN` term and reads every resolved
    /// job in the database instead of the hour's.
    static let resolvedPerMinuteSQL = """
        SELECT substr(finished_at, 1, 16) AS minute, state, count(*) FROM jobs INDEXED BY jobs_finished
        WHERE finished_at >= ? AND finished_at < ?
          AND state IN ('fulfilled', 'rejected', 'cancelled')
        GROUP BY minute, state ORDER BY minute
        """

    /// Pending and running jobs by pool, pools in name order; a pool with
    /// neither is absent. Pending jobs are counted in the `jobs_claim`
    /// index alone (no table rows read); running ones are few.
    public func jobCountsByPool() async throws -> [PoolJobCounts] {
        try await read(doing: "count the jobs of each pool") { db in
            var counts: [String: PoolJobCounts] = [:]
            let pending = try RawStatement(db, """
                SELECT pool, count(*) FROM jobs INDEXED BY jobs_claim WHERE state = 'pending' GROUP BY pool
                """)
            for (pool, count) in try pending.rows({ ($0.text(0) ?? "", $0.int(1)) }) {
                counts[pool, default: PoolJobCounts(pool: pool, pending: 0, running: 0)].pending += count
            }
            let running = try RawStatement(db, "SELECT pool, count(*) FROM jobs WHERE state = 'running' GROUP BY pool")
            for (pool, count) in try running.rows({ ($0.text(0) ?? "", $0.int(1)) }) {
                counts[pool, default: PoolJobCounts(pool: pool, pending: 0, running: 0)].running += count
            }
            return counts.values.sorted { $0.pool < $1.pool }
        }
    }
}
