import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore {
    public func nextRunAt(pool: String, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void) {
        // On the writer, so it sees every claim made before it.
        writer.enqueue(
            atomic: false,
            { db in
                // A paused pool has no job to run until its pause ends (or,
                // without an end, until a resume wakes the engine).
                let now = Timestamp.now()
                let pauses = try Self.pauseEnds(pool: pool, now: now, db)
                if let pool = pauses.pool { return pool.flatMap(Timestamp.date) }
                // A skip scan of `jobs_claim` (pool, priority DESC, run_at, id):
                // for each priority present, one seek to its earliest run_at
                // of a definition not paused. A plain min(run_at) would read
                // every pending row of the pool.
                let statement = try RawStatement(
                    db,
                    """
                    WITH RECURSIVE levels(priority) AS (
                        SELECT max(priority) FROM jobs INDEXED BY jobs_claim WHERE state = 'pending' AND waiting_on = 0 AND pool = ?1
                        UNION ALL
                        SELECT (SELECT max(priority) FROM jobs INDEXED BY jobs_claim
                                WHERE state = 'pending' AND waiting_on = 0 AND pool = ?1 AND priority < levels.priority)
                        FROM levels WHERE levels.priority IS NOT NULL)
                    SELECT min((SELECT run_at FROM jobs INDEXED BY jobs_claim
                                WHERE state = 'pending' AND waiting_on = 0 AND pool = ?1 AND priority = levels.priority
                                    AND definition NOT IN (
                                        SELECT name FROM pauses
                                        WHERE scope = 'definition' AND (until IS NULL OR until > ?2))
                                ORDER BY run_at LIMIT 1))
                    FROM levels WHERE levels.priority IS NOT NULL
                    """)
                try statement.bind(1, pool)
                try statement.bind(2, now)
                let text = try statement.firstRow { $0.text(0) } ?? nil
                // A paused definition's jobs may run when its pause ends:
                // the engine looks again then.
                let next = [text, pauses.definitions].compactMap { $0 }.min()
                return next.flatMap(Timestamp.date)
            }, completion: completion)
    }

    public func countJobs(in states: Set<JobState>) async throws -> [JobState: Int] {
        guard !states.isEmpty else { return [:] }
        let names = states.map(\.rawValue)
        return try await read(doing: "count jobs") { db in
            // One range of the `jobs_state` index per state: no table scan.
            let statement = try RawStatement(
                db,
                "SELECT state, count(*) FROM jobs WHERE state IN (\(Columns.placeholders(names.count))) GROUP BY state")
            for (index, name) in names.enumerated() { try statement.bind(Int32(index + 1), name) }
            var counts = Dictionary(uniqueKeysWithValues: states.map { ($0, 0) })
            for (name, count) in try statement.rows({ ($0.validText(0), $0.int(1)) }) {
                if let name, let state = JobState(rawValue: name) { counts[state, default: 0] += count }
            }
            return counts
        }
    }
}
