import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore {
    public func job(_ id: Int64) async throws -> JobDetail? {
        try await read(doing: "read job \(id)") { session in
            guard
                let job = try await session.firstRow(
                    "SELECT \(PostgresQueryColumns.job) FROM {s}.jobs WHERE id = $1", id,
                    decode: PostgresQueryColumns.job)
            else { return nil }
            return JobDetail(job: job, stages: try await Self.stages(of: [id], session)[id] ?? [])
        }
    }

    /// Newest first, one index range (`jobs_state`, `jobs_definition_state`
    /// or the primary key) read backwards.
    public func list(_ query: JobQuery) async throws -> JobPage {
        try Self.require((1...1000).contains(query.limit), "list limit must be within 1…1000, not \(query.limit)")
        if let states = query.states, states.isEmpty { return JobPage(jobs: [], nextCursor: nil) }
        var binds = PostgresBindings()
        binds.append(query.before ?? Int64.max)
        binds.append(query.limit)
        return try await jobPage(["id < $1"], binds, limit: "$2", query, doing: "list jobs")
    }

    /// The jobs that meet `conditions` and `query`'s states, definition, key and creation times,
    /// newest first: a page of at most `query.limit`, the parameter `limit`
    /// of `binds`.
    func jobPage(
        _ conditions: [String], _ binds: PostgresBindings, limit: String, _ query: JobQuery, doing what: String
    ) async throws -> JobPage {
        var conditions = conditions
        var binds = binds
        if let states = query.states {
            binds.append(states.map(\.rawValue).sorted())
            conditions.append("state = ANY($\(binds.count))")
        }
        if let definition = query.definition {
            binds.append(definition)
            conditions.append("definition = $\(binds.count)")
        }
        if let key = query.key {
            binds.append(key)
            conditions.append("idempotency_key = $\(binds.count)")
        }
        if let since = query.createdSince {
            binds.append(Timestamp.text(since))
            conditions.append("created_at >= $\(binds.count)::timestamptz")
        }
        if let until = query.createdUntil {
            binds.append(Timestamp.text(until))
            conditions.append("created_at < $\(binds.count)::timestamptz")
        }
        let sql = """
            SELECT \(PostgresQueryColumns.listed(values: query.values)) FROM {s}.jobs WHERE \(conditions.joined(separator: " AND "))
            ORDER BY id DESC LIMIT \(limit)
            """
        let pageSize = query.limit
        return try await read(doing: what) { [binds] session in
            let jobs = try await session.connection.query(session.query(sql, binds: binds), logger: session.logger)
                .decode(PostgresQueryColumns.job)
            return JobPage(jobs: jobs, nextCursor: jobs.count == pageSize ? jobs.last?.id : nil)
        }
    }

    public func events(of jobID: Int64) async throws -> [JobEvent] {
        try await read(doing: "read the events of job \(jobID)") { session in
            try await session.rows(
                "SELECT \(PostgresQueryColumns.event) FROM {s}.events WHERE job_id = $1 ORDER BY id", jobID,
                decode: PostgresQueryColumns.event)
        }
    }

    public func attemptHistory(of jobID: Int64) async throws -> [JobAttempt] {
        try await read(doing: "read the attempts of job \(jobID)") { session in
            let stages = try await session.rows(
                "SELECT \(PostgresQueryColumns.stage), attempt FROM {s}.stage_attempts WHERE job_id = $1 ORDER BY attempt, position",
                jobID
            ) { row in
                (try PostgresIndexedRow(row).int(PostgresQueryColumns.stageCount), try PostgresQueryColumns.stage(row))
            }
            let stagesByAttempt = Dictionary(grouping: stages, by: \.0).mapValues { $0.map(\.1) }
            return try await session.rows(
                """
                SELECT attempt, state, result, result_bytes, error, started_at, finished_at
                FROM {s}.job_attempts WHERE job_id = $1 ORDER BY attempt
                """, jobID
            ) { row in
                let row = PostgresIndexedRow(row)
                let attempt = try row.int(0)
                let stateText = try row.text(1) ?? ""
                guard let state = JobState(rawValue: stateText) else {
                    throw JobStoreError(
                        .corrupt, "attempt \(attempt) of job \(jobID) has the unknown state '\(stateText)'",
                        jobID: jobID)
                }
                return JobAttempt(
                    jobID: jobID, attempt: attempt, state: state, result: try row.value(2), error: try row.text(4),
                    startedAt: try row.date(5), finishedAt: try row.date(6), stages: stagesByAttempt[attempt] ?? [])
            }
        }
    }

    public func nextRunAt(pool: String, completion: @escaping @Sendable (Result<Date?, any Error>) -> Void) {
        // On the writer, so it sees every claim made before it.
        writer.enqueue(
            atomic: false,
            { session in
                // A paused pool: when its pause ends (none: a resume wakes
                // the engine). Else the earliest job of a definition not
                // paused, or the end of a definition's pause if sooner.
                try await session.firstRow(
                    """
                    SELECT CASE WHEN pool_pause.held THEN pool_pause.until
                        ELSE least(
                            (SELECT min(run_at) FROM {s}.jobs WHERE state = 'pending' AND waiting_on = 0 AND pool = $1
                                AND definition NOT IN (
                                SELECT name FROM {s}.pauses
                                WHERE scope = 'definition' AND (until IS NULL OR until > now()))),
                            (SELECT min(until) FROM {s}.pauses WHERE scope = 'definition' AND until > now()))
                        END
                    FROM (SELECT count(*) > 0 AS held, max(until) AS until FROM {s}.pauses
                          WHERE scope = 'pool' AND name = $1 AND (until IS NULL OR until > now())) AS pool_pause
                    """, pool
                ) { try PostgresIndexedRow($0).date(0) } ?? nil
            }, completion: completion)
    }

    public func countJobs(in states: Set<JobState>) async throws -> [JobState: Int] {
        guard !states.isEmpty else { return [:] }
        let names = states.map(\.rawValue).sorted()
        return try await read(doing: "count jobs") { session in
            let rows = try await session.rows(
                "SELECT state, count(*) FROM {s}.jobs WHERE state = ANY($1) GROUP BY state", names
            ) { row in (try PostgresIndexedRow(row).text(0) ?? "", try PostgresIndexedRow(row).int(1)) }
            var counts = Dictionary(uniqueKeysWithValues: states.map { ($0, 0) })
            for (name, count) in rows {
                if let state = JobState(rawValue: name) { counts[state] = count }
            }
            return counts
        }
    }
}
