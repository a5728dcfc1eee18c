import Foundation
import JobStore
internal import PostgresNIO

/// The dashboard's and the metrics' reads, as `SQLiteJobStore+Dashboard.swift`
/// has them: over every host's jobs, the database being shared.
extension PostgresJobStore {
    /// Jobs resolved per minute and state, for minutes from `start` (rounded
    /// down to its minute) to before `end`; minutes without any are absent.
    /// Reads the `jobs_finished` index for the range.
    public func resolvedPerMinute(from start: Date, to end: Date) async throws -> [ResolvedMinute] {
        let from = PostgresStoredValue.time(
            Date(timeIntervalSince1970: (start.timeIntervalSince1970 / 60).rounded(.down) * 60))
        let to = PostgresStoredValue.time(end)
        return try await read(doing: "count the jobs resolved per minute") { session in
            try await session.rows(
                """
                SELECT date_trunc('minute', finished_at) AS minute, state, count(*) FROM {s}.jobs
                WHERE finished_at >= $1::timestamptz AND finished_at < $2::timestamptz
                  AND state IN ('fulfilled', 'rejected', 'cancelled')
                GROUP BY minute, state ORDER BY minute, state
                """, from, to
            ) { row -> ResolvedMinute? in
                let row = PostgresIndexedRow(row)
                guard let minute = try row.date(0), let state = try row.text(1).flatMap(JobState.init(rawValue:)) else {
                    return nil
                }
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
                SELECT pool, count(*) FILTER (WHERE state = 'pending' AND waiting_on = 0), count(*) FILTER (WHERE state = 'running')
                FROM {s}.jobs WHERE state IN ('pending', 'running')
                GROUP BY pool ORDER BY pool
                """
            ) { row in
                let row = PostgresIndexedRow(row)
                return PoolJobCounts(pool: try row.text(0) ?? "", pending: try row.int(1), running: try row.int(2))
            }
        }
    }
}

/// A job's dashboard page (see ``JobPageQuery``), as
/// `SQLiteJobStore+Dashboard.swift` reads it: index ranges and LIMIT, values
/// cut with `left` (text) and `substring` (bytes), whole sizes by `octet_length`.
extension PostgresJobStore {
    public func jobPage(_ query: JobPageQuery) async throws -> JobPageRead? {
        try await read(doing: "read the page of job \(query.id)") { session in
            try await Self.jobPage(query, session)
        }
    }

    /// Columns in the order ``PostgresQueryColumns/job`` decodes, values cut to `$1`
    /// characters (bytes) and names to `$2`, then the whole sizes of input,
    /// result and error.
    static let jobPageColumns = """
        id, left(definition, $2), left(pool, $2), state, priority, left(idempotency_key, $2), \
        left(input, $1), substring(input_bytes from 1 for $1), left(result, $1), substring(result_bytes from 1 for $1), \
        left(error, $1), attempt, cancel_requested, claims, left(lease_owner, $2), lease_expires_at, run_at, created_at, \
        started_at, finished_at, scheduled_for, parent_id, parent_stage, item_index, \(PostgresQueryColumns.waitingOn), \
        coalesce(octet_length(input), octet_length(input_bytes)), coalesce(octet_length(result), octet_length(result_bytes)), \
        octet_length(error)
        """
    /// Columns in the order ``PostgresQueryColumns/stage`` decodes, then the whole sizes
    /// of value and error.
    static let stagePageColumns = """
        job_id, position, left(name, $2), left(kind, $2), state, left(value, $1), substring(value_bytes from 1 for $1), \
        left(error, $1), exit_code, attempts, started_at, finished_at, left(error_code, $2), \
        coalesce(octet_length(value), octet_length(value_bytes)), octet_length(error)
        """

    private static func jobPage(_ query: JobPageQuery, _ session: PostgresSession) async throws -> JobPageRead? {
        typealias Place = JobPageRead.ValuePlace
        let valueCharacters = Int32(clamping: query.valueCharacters)
        let textCharacters = Int32(clamping: query.textCharacters)
        var whole: [Place: Int] = [:]
        func cut(_ row: PostgresIndexedRow, _ column: Int, shown: Data?) throws -> Int? {
            guard let bytes = try row.optionalInt(column), bytes > (shown?.count ?? 0) else { return nil }
            return bytes
        }

        let found = try await session.firstRow(
            "SELECT \(jobPageColumns) FROM {s}.jobs WHERE id = $3", valueCharacters, textCharacters, query.id
        ) { row -> (Job, [Place: Int]) in
            let job = try PostgresQueryColumns.job(row)
            let row = PostgresIndexedRow(row)
            var cuts: [Place: Int] = [:]
            cuts[.input] = try cut(row, 25, shown: job.input)
            cuts[.result] = try cut(row, 26, shown: job.result)
            cuts[.error] = try cut(row, 27, shown: job.error.map { Data($0.utf8) })
            return (job, cuts)
        }
        guard let (job, jobCuts) = found else { return nil }
        whole.merge(jobCuts) { $1 }

        func stages(table: String, attempt: Int?) async throws -> ([Stage], [Place: Int]) {
            let attemptTerm = attempt == nil ? "" : " AND attempt = $6"
            var values: [(any PostgresThrowingDynamicTypeEncodable)?] = [
                valueCharacters, textCharacters, query.id, query.firstStage, query.stageLimit,
            ]
            if let attempt { values.append(attempt) }
            let rows = try await session.rows(
                try session.query(
                    """
                    SELECT \(stagePageColumns) FROM {s}.\(table)
                    WHERE job_id = $3\(attemptTerm) AND position >= $4 ORDER BY position LIMIT $5
                    """, values)
            ) { row -> (Stage, Int?, Int?) in
                let stage = try PostgresQueryColumns.stage(row)
                let raw = PostgresIndexedRow(row)
                return (
                    stage, try cut(raw, 13, shown: stage.value),
                    try cut(raw, 14, shown: stage.error.map { Data($0.utf8) })
                )
            }
            var cuts: [Place: Int] = [:]
            for (stage, value, error) in rows {
                if let value { cuts[.stageValue(attempt: attempt, position: stage.position)] = value }
                if let error { cuts[.stageError(attempt: attempt, position: stage.position)] = error }
            }
            return (rows.map(\.0), cuts)
        }
        func count(_ table: String) async throws -> Int {
            try await session.firstRow("SELECT count(*) FROM {s}.\(table) WHERE job_id = $1", query.id) {
                try PostgresIndexedRow($0).int(0)
            } ?? 0
        }

        let (current, currentCuts) = try await stages(table: "stages", attempt: nil)
        whole.merge(currentCuts) { $1 }
        let stageCount = try await count("stages")

        let attempts = try await session.rows(
            """
            SELECT attempt, state, left(result, $1), substring(result_bytes from 1 for $1), left(error, $1),
                   started_at, finished_at, coalesce(octet_length(result), octet_length(result_bytes)), octet_length(error)
            FROM {s}.job_attempts WHERE job_id = $2 ORDER BY attempt DESC LIMIT $3
            """, valueCharacters, query.id, query.attemptLimit
        ) { row -> (JobAttempt, Int?, Int?) in
            let row = PostgresIndexedRow(row)
            let attempt = try row.int(0)
            let stateText = try row.text(1) ?? ""
            guard let state = JobState(rawValue: stateText) else {
                throw JobStoreError(
                    .corrupt, "attempt \(attempt) of job \(query.id) has the unknown state '\(stateText)'",
                    jobID: query.id)
            }
            let result = try row.value(2)
            let error = try row.text(4)
            return (
                JobAttempt(
                    jobID: query.id, attempt: attempt, state: state, result: result, error: error,
                    startedAt: try row.date(5), finishedAt: try row.date(6), stages: []),
                try cut(row, 7, shown: result), try cut(row, 8, shown: error.map { Data($0.utf8) })
            )
        }
        var history: [JobAttempt] = []
        for (attempt, result, error) in attempts.reversed() {
            var attempt = attempt
            if let result { whole[.attemptResult(attempt.attempt)] = result }
            if let error { whole[.attemptError(attempt.attempt)] = error }
            let (stages, cuts) = try await stages(table: "stage_attempts", attempt: attempt.attempt)
            attempt.stages = stages
            whole.merge(cuts) { $1 }
            history.append(attempt)
        }
        let attemptCount = try await count("job_attempts")

        let events = try await session.rows(
            """
            SELECT id, job_id, position, left(kind, $1), left(message, $1), created_at FROM {s}.events
            WHERE job_id = $2 AND id < $3 ORDER BY id DESC LIMIT $4
            """, textCharacters, query.id, query.eventsBefore ?? Int64.max, query.eventLimit,
            decode: PostgresQueryColumns.event
        ).reversed()
        let eventCount = try await count("events")

        return JobPageRead(
            job: job, stages: current, stageCount: stageCount, history: history, attemptCount: attemptCount,
            events: Array(events), eventCount: eventCount, wholeBytes: whole)
    }
}

extension PostgresJobStore {
    /// One whole value or error of a job (the dashboard's link from a cut
    /// value); nil when the job, the stage or the value is not there.
    public func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data? {
        let (table, column, attempt, position) = place.source
        // A value is two columns (text, bytes); an error one, read twice.
        let columns = column == "error" ? "error, NULL::bytea" : "\(column), \(column)_bytes"
        var sql = "SELECT \(columns) FROM {s}.\(table) WHERE \(table == "jobs" ? "id" : "job_id") = $1"
        if attempt != nil { sql += " AND attempt = $2" }
        if position != nil { sql += " AND position = $\(attempt == nil ? 2 : 3)" }
        return try await read(doing: "read the \(place.name) of job \(id)") { [sql] session in
            var values: [(any PostgresThrowingDynamicTypeEncodable)?] = [id]
            if let attempt { values.append(attempt) }
            if let position { values.append(position) }
            return try await session.rows(try session.query(sql, values)) { try PostgresIndexedRow($0).value(0) }.first
                ?? nil
        }
    }
}
