import Foundation
internal import GRDB

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
        let limit = query.limit
        return try await read(doing: "list jobs") { db in
            let statement = try RawStatement(db, sql)
            for (index, argument) in arguments.enumerated() {
                switch argument {
                case .int(let value): try statement.bind(Int32(index + 1), value)
                case .text(let value): try statement.bind(Int32(index + 1), value)
                }
            }
            let jobs = try statement.rows(Columns.job)
            return JobPage(jobs: jobs, nextCursor: jobs.count == limit ? jobs.last?.id : nil)
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
        guard let states else {
            return (
                "SELECT \(Columns.listed(values: query.values)) FROM jobs WHERE id < ? ORDER BY id DESC LIMIT ?",
                [.int(before), .int(Int64(query.limit))])
        }
        var arguments: [Argument] = []
        let definitionTerm = query.definition == nil ? "" : " AND definition = ?"
        let parts = states.sorted { $0.rawValue < $1.rawValue }.map { state -> String in
            arguments.append(.text(state.rawValue))
            if let definition = query.definition { arguments.append(.text(definition)) }
            arguments += [.int(before), .int(Int64(query.limit))]
            return "SELECT * FROM (SELECT id FROM jobs WHERE state = ?\(definitionTerm) AND id < ? ORDER BY id DESC LIMIT ?)"
        }
        arguments.append(.int(Int64(query.limit)))
        let sql = """
            SELECT \(Columns.listed(values: query.values)) FROM jobs
            WHERE id IN (\(parts.joined(separator: " UNION ALL ")))
            ORDER BY id DESC LIMIT ?
            """
        return (sql, arguments)
    }

    public func events(of jobID: Int64) async throws -> [JobEvent] {
        try await read(doing: "read the events of job \(jobID)") { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Columns.event) FROM events WHERE job_id = ? ORDER BY id", arguments: [jobID]
            ).map(Columns.event)
        }
    }

    public func attemptHistory(of jobID: Int64) async throws -> [JobAttempt] {
        try await read(doing: "read the attempts of job \(jobID)") { db in
            let attempts = try Row.fetchAll(
                db,
                sql: """
                    SELECT attempt, state, result, error, started_at, finished_at
                    FROM job_attempts WHERE job_id = ? ORDER BY attempt
                    """,
                arguments: [jobID])
            let stagesOf = try RawStatement(db, """
                SELECT \(Columns.stage), attempt
                FROM stage_attempts WHERE job_id = ? ORDER BY attempt, position
                """)
            try stagesOf.bind(1, jobID)
            var stagesByAttempt: [Int: [Stage]] = [:]
            for (attempt, stage) in try stagesOf.rows({ ($0.int(Columns.stageCount), try Columns.stage($0)) }) {
                stagesByAttempt[attempt, default: []].append(stage)
            }
            return try attempts.map { row in
                let attempt: Int = row[0]
                let stateText: String = row[1]
                guard let state = JobState(rawValue: stateText) else {
                    throw JobStoreError(.corrupt, "attempt \(attempt) of job \(jobID) has the unknown state '\(stateText)'", jobID: jobID)
                }
                return JobAttempt(
                    jobID: jobID, attempt: attempt, state: state,
                    result: StoredValue.data(row[2]), error: row[3],
                    startedAt: (row[4] as String?).flatMap(Timestamp.date),
                    finishedAt: (row[5] as String?).flatMap(Timestamp.date),
                    stages: stagesByAttempt[attempt] ?? [])
            }
        }
    }
}
