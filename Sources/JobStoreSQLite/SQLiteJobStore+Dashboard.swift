import Foundation
internal import GRDB
import JobStore

/// Reads for the dashboard and the metrics (``JobReadStore``).
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
            let pending = try RawStatement(
                db,
                """
                SELECT pool, count(*) FROM jobs INDEXED BY jobs_claim WHERE state = 'pending' AND waiting_on = 0 GROUP BY pool
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

/// A job's dashboard page (see ``JobPageQuery``): every read limited in SQL
/// by an index range and LIMIT, every value cut with `substr` (characters of
/// a TEXT value, bytes of a BLOB), its whole size taken with `length`.
extension SQLiteJobStore {
    public func jobPage(_ query: JobPageQuery) async throws -> JobPageRead? {
        try await read(doing: "read the page of job \(query.id)") { db in
            try Self.jobPage(query, db)
        }
    }

    /// Columns in the order ``Columns/job`` decodes, values cut to `?1`
    /// characters and names to `?2`, then the whole sizes of input, result
    /// and error.
    static let jobPageColumns = """
        id, substr(definition, 1, ?2), substr(pool, 1, ?2), state, priority, substr(idempotency_key, 1, ?2), \
        substr(input, 1, ?1), substr(result, 1, ?1), substr(error, 1, ?1), attempt, cancel_requested, claims, \
        substr(lease_owner, 1, ?2), lease_expires_at, run_at, created_at, started_at, finished_at, scheduled_for, \
        parent_id, parent_stage, item_index, \(Columns.waitingOn), \
        length(CAST(input AS BLOB)), length(CAST(result AS BLOB)), length(CAST(error AS BLOB))
        """
    /// Columns in the order ``Columns/stage`` decodes, cut as `jobPageColumns`,
    /// then the whole sizes of value and error.
    static let stagePageColumns = """
        job_id, position, substr(name, 1, ?2), substr(kind, 1, ?2), state, substr(value, 1, ?1), substr(error, 1, ?1), \
        exit_code, attempts, started_at, finished_at, substr(error_code, 1, ?2), \
        length(CAST(value AS BLOB)), length(CAST(error AS BLOB))
        """

    private static func jobPage(_ query: JobPageQuery, _ db: Database) throws -> JobPageRead? {
        typealias Place = JobPageRead.ValuePlace
        var whole: [Place: Int] = [:]
        /// Notes the whole size of the value in `column` when it was cut.
        func note(_ place: Place, _ row: RawRow, _ column: Int32, shown: Data?) {
            guard let bytes = row.optionalInt(column), bytes > (shown?.count ?? 0) else { return }
            whole[place] = bytes
        }
        func bindCuts(_ statement: RawStatement) throws {
            try statement.bind(1, query.valueCharacters)
            try statement.bind(2, query.textCharacters)
        }

        let jobStatement = try RawStatement(db, "SELECT \(jobPageColumns) FROM jobs WHERE id = ?3")
        try bindCuts(jobStatement)
        try jobStatement.bind(3, query.id)
        guard
            let job = try jobStatement.firstRow({ row -> Job in
                let job = try Columns.job(row)
                note(.input, row, 23, shown: job.input)
                note(.result, row, 24, shown: job.result)
                note(.error, row, 25, shown: job.error.map { Data($0.utf8) })
                return job
            })
        else { return nil }

        func stages(table: String, attempt: Int?) throws -> [Stage] {
            let attemptTerm = attempt == nil ? "" : " AND attempt = ?6"
            let statement = try RawStatement(
                db,
                """
                SELECT \(stagePageColumns) FROM \(table)
                WHERE job_id = ?3\(attemptTerm) AND position >= ?4 ORDER BY position LIMIT ?5
                """)
            try bindCuts(statement)
            try statement.bind(3, query.id)
            try statement.bind(4, query.firstStage)
            try statement.bind(5, query.stageLimit)
            if let attempt { try statement.bind(6, attempt) }
            return try statement.rows { row -> Stage in
                let stage = try Columns.stage(row, table: table)
                note(.stageValue(attempt: attempt, position: stage.position), row, 12, shown: stage.value)
                note(
                    .stageError(attempt: attempt, position: stage.position), row, 13,
                    shown: stage.error.map { Data($0.utf8) })
                return stage
            }
        }
        func count(_ sql: String) throws -> Int {
            let statement = try RawStatement(db, sql)
            try statement.bind(1, query.id)
            return try statement.firstRow { $0.int(0) } ?? 0
        }

        let current = try stages(table: "stages", attempt: nil)
        let stageCount = try count("SELECT count(*) FROM stages WHERE job_id = ?1")

        let attemptStatement = try RawStatement(
            db,
            """
            SELECT job_id, attempt, state, substr(result, 1, ?1), substr(error, 1, ?1), started_at, finished_at,
                   length(CAST(result AS BLOB)), length(CAST(error AS BLOB))
            FROM job_attempts WHERE job_id = ?3 ORDER BY attempt DESC LIMIT ?4
            """)
        try bindCuts(attemptStatement)
        try attemptStatement.bind(3, query.id)
        try attemptStatement.bind(4, query.attemptLimit)
        let attempts = try attemptStatement.rows { raw -> JobAttempt in
            var row = CheckedRow(raw, table: "job_attempts", names: Columns.attemptNames)
            row.identify([0, 1], jobColumn: 0)
            let attempt = try row.count(1)
            let result = row.value(3)
            let error = try row.text(4)
            note(.attemptResult(attempt), raw, 7, shown: result)
            note(.attemptError(attempt), raw, 8, shown: error.map { Data($0.utf8) })
            return JobAttempt(
                jobID: query.id, attempt: attempt, state: try row.state(2, JobState.self), result: result, error: error,
                startedAt: try row.date(5), finishedAt: try row.date(6), stages: [])
        }
        var history: [JobAttempt] = []
        for var attempt in attempts.reversed() {
            attempt.stages = try stages(table: "stage_attempts", attempt: attempt.attempt)
            history.append(attempt)
        }
        let attemptCount = try count("SELECT count(*) FROM job_attempts WHERE job_id = ?1")

        let eventStatement = try RawStatement(
            db,
            """
            SELECT id, job_id, position, substr(kind, 1, ?2), substr(message, 1, ?2), created_at FROM events
            WHERE job_id = ?3 AND id < ?4 ORDER BY id DESC LIMIT ?5
            """)
        try eventStatement.bind(2, query.textCharacters)
        try eventStatement.bind(3, query.id)
        try eventStatement.bind(4, query.eventsBefore ?? Int64.max)
        try eventStatement.bind(5, query.eventLimit)
        let events = try eventStatement.rows(Columns.event).reversed()
        let eventCount = try count("SELECT count(*) FROM events WHERE job_id = ?1")

        return JobPageRead(
            job: job, stages: current, stageCount: stageCount, history: history, attemptCount: attemptCount,
            events: Array(events), eventCount: eventCount, wholeBytes: whole)
    }
}

extension SQLiteJobStore {
    /// One whole value or error of a job (the dashboard's link from a cut
    /// value); nil when the job, the stage or the value is not there.
    public func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data? {
        let (table, column, attempt, position) = place.source
        var sql = "SELECT \(column) FROM \(table) WHERE \(table == "jobs" ? "id" : "job_id") = ?1"
        if attempt != nil { sql += " AND attempt = ?2" }
        if position != nil { sql += " AND position = ?3" }
        return try await read(doing: "read the \(place.name) of job \(id)") { [sql] db in
            let statement = try RawStatement(db, sql)
            try statement.bind(1, id)
            if let attempt { try statement.bind(2, attempt) }
            if let position { try statement.bind(3, position) }
            return try statement.firstRow { $0.value(0) } ?? nil
        }
    }
}
