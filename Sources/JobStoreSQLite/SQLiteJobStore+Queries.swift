import Foundation
internal import GRDB
import JobStore

extension SQLiteJobStore {
    public func job(_ id: Int64) async throws -> JobDetail? {
        try await read(doing: "read job \(id)") { db in
            let statement = try RawStatement(db, "SELECT \(Columns.job) FROM jobs WHERE id = ?")
            try statement.bind(1, id)
            guard let job = try statement.firstRow(Columns.job) else { return nil }
            return JobDetail(job: job, stages: try Columns.stages(of: id, db))
        }
    }

    /// Newest first. With a state filter, one index range per state is read
    /// (at most `limit` rows each) and the ranges merged, so a page costs the
    /// same on a table of a thousand jobs or a million.
    public func list(_ query: JobQuery) async throws -> JobPage {
        try Self.require((1...1000).contains(query.limit), "list limit must be within 1…1000, not \(query.limit)")
        if let states = query.states, states.isEmpty {
            return JobPage(jobs: [], nextCursor: nil)
        }
        let (sql, arguments) = Self.listStatement(query)
        return try await jobPage(sql, arguments, limit: query.limit, doing: "list jobs")
    }

    /// The jobs `sql` selects (the listed columns, id first, newest first),
    /// with `arguments` bound in order: a page of at most `limit`.
    func jobPage(_ sql: String, _ arguments: [Argument], limit: Int, doing what: String) async throws -> JobPage {
        try await read(doing: what) { db in
            let statement = try RawStatement(db, sql)
            for (index, argument) in arguments.enumerated() {
                switch argument {
                case .int(let value): try statement.bind(Int32(index + 1), value)
                case .text(let value): try statement.bind(Int32(index + 1), value)
                }
            }
            // A row that cannot be read is reported beside the page, not in
            // place of it: one row written by hand must not hide the others.
            var unreadable: [JobStoreError] = []
            var read = 0
            var lastID: Int64?
            let jobs = try statement.rows(
                { row -> Job in
                    read += 1
                    lastID = row.int64(0)
                    return try Columns.job(row)
                }, skipping: &unreadable)
            return JobPage(
                jobs: jobs, nextCursor: read == limit ? lastID : nil, unreadable: unreadable.map(UnreadableRow.init))
        }
    }

    enum Argument: Sendable {
        case int(Int64)
        case text(String)
    }

    static func listStatement(_ query: JobQuery) -> (String, [Argument]) {
        // A definition filter alone uses the (definition, state, id) index, one state at a time.
        let states = query.states ?? (query.definition == nil ? nil : Set(JobState.allCases))
        let before = query.before ?? Int64.max
        let (extraTerms, extraArguments) = filterTerms(query)
        guard let states else {
            return (
                """
                SELECT \(Columns.listed(values: query.values)) FROM jobs WHERE id < ?\(extraTerms) \
                ORDER BY id DESC LIMIT ?
                """,
                [.int(before)] + extraArguments + [.int(Int64(query.limit))]
            )
        }
        var arguments: [Argument] = []
        let definitionTerm = query.definition == nil ? "" : " AND definition = ?"
        let parts = states.sorted { $0.rawValue < $1.rawValue }.map { state -> String in
            arguments.append(.text(state.rawValue))
            if let definition = query.definition { arguments.append(.text(definition)) }
            arguments += [.int(before)] + extraArguments + [.int(Int64(query.limit))]
            return """
                SELECT * FROM (SELECT id FROM jobs WHERE state = ?\(definitionTerm) AND id < ?\(extraTerms) \
                ORDER BY id DESC LIMIT ?)
                """
        }
        arguments.append(.int(Int64(query.limit)))
        let sql = """
            SELECT \(Columns.listed(values: query.values)) FROM jobs
            WHERE id IN (\(parts.joined(separator: " UNION ALL ")))
            ORDER BY id DESC LIMIT ?
            """
        return (sql, arguments)
    }

    /// The query's key and creation times as ` AND …` terms on `jobs`, with their arguments in order.
    static func filterTerms(_ query: JobQuery) -> (String, [Argument]) {
        var terms = ""
        var arguments: [Argument] = []
        if let key = query.key {
            terms += " AND idempotency_key = ?"
            arguments.append(.text(key))
        }
        if let since = query.createdSince {
            terms += " AND created_at >= ?"
            arguments.append(.text(Timestamp.text(since)))
        }
        if let until = query.createdUntil {
            terms += " AND created_at < ?"
            arguments.append(.text(Timestamp.text(until)))
        }
        return (terms, arguments)
    }

    public func events(of jobID: Int64) async throws -> [JobEvent] {
        try await read(doing: "read the events of job \(jobID)") { db in
            let statement = try RawStatement(db, "SELECT \(Columns.event) FROM events WHERE job_id = ? ORDER BY id")
            try statement.bind(1, jobID)
            return try statement.rows(Columns.event)
        }
    }

    public func attemptHistory(of jobID: Int64) async throws -> [JobAttempt] {
        try await read(doing: "read the attempts of job \(jobID)") { db in
            let stagesOf = try RawStatement(
                db,
                """
                SELECT \(Columns.stage), attempt
                FROM stage_attempts WHERE job_id = ? ORDER BY attempt, position
                """)
            try stagesOf.bind(1, jobID)
            var stagesByAttempt: [Int: [Stage]] = [:]
            for (attempt, stage) in try stagesOf.rows({ raw in
                var row = CheckedRow(raw, table: "stage_attempts", names: Columns.stageNames + ["attempt"])
                row.identify([0, Columns.stageCount, 1], jobColumn: 0)
                return (try row.count(Columns.stageCount), try Columns.stage(raw, table: "stage_attempts"))
            }) {
                stagesByAttempt[attempt, default: []].append(stage)
            }
            let attempts = try RawStatement(
                db,
                """
                SELECT job_id, attempt, state, result, error, started_at, finished_at
                FROM job_attempts WHERE job_id = ? ORDER BY attempt
                """)
            try attempts.bind(1, jobID)
            return try attempts.rows { raw in
                var row = CheckedRow(raw, table: "job_attempts", names: Columns.attemptNames)
                row.identify([0, 1], jobColumn: 0)
                let attempt = try row.count(1)
                return JobAttempt(
                    jobID: jobID, attempt: attempt, state: try row.state(2, JobState.self),
                    result: row.value(3), error: try row.text(4),
                    startedAt: try row.date(5), finishedAt: try row.date(6),
                    stages: stagesByAttempt[attempt] ?? [])
            }
        }
    }
}
