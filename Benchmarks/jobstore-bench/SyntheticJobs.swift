import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite

/// Fills a database with realistic-looking jobs, fast, with SQL run inside
/// SQLite: 7 definitions; of every 20 jobs one pending, one running, one
/// rejected, one cancelled and 16 fulfilled; 3 stages each; created two
/// seconds apart, ending now.
enum SyntheticJobs {
    /// `jobstore-bench fill PATH JOBS`: grows the database at `path` to
    /// `jobs` jobs (a bigger one is left as it is), then prints how many
    /// jobs it holds and its highest id.
    static func fill(path: String, jobs: Int) async {
        do {
            let store = try SQLiteJobStore(path: path)
            let have = Int(try await store.queryStrings("SELECT count(*) FROM jobs").first.flatMap { $0 } ?? "0") ?? 0
            let start = ContinuousClock.now
            if have < jobs { try await fill(store, upTo: jobs, from: have) }
            let count = try await store.queryStrings("SELECT count(*) FROM jobs").first.flatMap { $0 } ?? "0"
            let maxID = try await store.queryStrings("SELECT max(id) FROM jobs").first.flatMap { $0 } ?? "0"
            try await store.close()
            let seconds = Double((ContinuousClock.now - start).components.seconds)
            print("jobs \(count) max-id \(maxID) built-in-seconds \(have < jobs ? Int(seconds) : 0)")
        } catch {
            FileHandle.standardError.write(Data("jobstore-bench fill: \(error)\n".utf8))
            exit(1)
        }
    }

    static func fill(_ store: SQLiteJobStore, upTo total: Int, from existing: Int) async throws {
        var low = existing + 1
        while low <= total {
            let high = min(low + 49_999, total)
            try await store.executeInWriteTransaction(
                """
                WITH RECURSIVE n(i) AS (SELECT \(low) UNION ALL SELECT i + 1 FROM n WHERE i < \(high)),
                shaped AS (
                    SELECT i,
                           CASE i % 20 WHEN 0 THEN 'pending' WHEN 1 THEN 'running' WHEN 2 THEN 'rejected'
                                       WHEN 3 THEN 'cancelled' ELSE 'fulfilled' END AS state,
                           strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ((\(total) - i) * 2) || ' seconds') AS t
                    FROM n)
                INSERT INTO jobs (id, definition, pool, state, priority, input, result, error, attempt, claims,
                                  lease_owner, lease_expires_at, run_at, created_at, started_at, finished_at)
                SELECT i, 'def-' || (i % 7), 'default', state, i % 3, 'input ' || i,
                       CASE WHEN state = 'fulfilled' THEN 'result ' || i END,
                       CASE WHEN state = 'rejected' THEN 'exit status 1: no such file'
                            WHEN state = 'cancelled' THEN 'cancelled' END,
                       1, CASE WHEN state = 'pending' THEN 0 ELSE 1 END,
                       CASE WHEN state = 'pending' THEN NULL ELSE 'bench' END,
                       CASE WHEN state = 'running' THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 hour') END,
                       t, t,
                       CASE WHEN state = 'pending' THEN NULL ELSE t END,
                       CASE WHEN state IN ('pending', 'running') THEN NULL
                            ELSE strftime('%Y-%m-%dT%H:%M:%fZ', t, '+1.5 seconds') END
                FROM shaped;

                INSERT INTO stages (job_id, position, name, kind, state, value, error, exit_code, attempts,
                                    started_at, finished_at)
                SELECT j.id, p.position, p.name, p.kind,
                       CASE WHEN j.state = 'pending' THEN 'pending'
                            WHEN j.state = 'running' THEN CASE p.position WHEN 0 THEN 'fulfilled' WHEN 1 THEN 'running' ELSE 'pending' END
                            WHEN j.state = 'fulfilled' THEN 'fulfilled'
                            ELSE CASE p.position WHEN 0 THEN 'fulfilled' WHEN 1 THEN 'rejected' ELSE 'skipped' END END,
                       CASE WHEN j.state = 'fulfilled' OR (j.state <> 'pending' AND p.position = 0)
                            THEN 'value ' || j.id || '/' || p.position END,
                       CASE WHEN j.state IN ('rejected', 'cancelled') AND p.position = 1 THEN 'exit status 1' END,
                       CASE WHEN j.state = 'pending' THEN NULL ELSE 0 END,
                       CASE WHEN j.state = 'pending' THEN 0 ELSE 1 END,
                       j.started_at, j.finished_at
                FROM jobs j
                CROSS JOIN (SELECT 0 AS position, 'fetch' AS name, 'then' AS kind
                            UNION ALL SELECT 1, 'total', 'map'
                            UNION ALL SELECT 2, 'publish', 'done') p
                WHERE j.id BETWEEN \(low) AND \(high);
                """)
            low = high + 1
        }
    }
}
