import Foundation
import JobStore
internal import GRDB

extension SQLiteJobStore: JobSearchStore {
    /// Read from the FTS5 index in descending rowid (job id) order, so that a
    /// page stops after `limit` matches however many jobs match.
    public func search(_ text: String, _ query: JobQuery) async throws -> JobPage {
        try Self.require((1...1000).contains(query.limit), "list limit must be within 1…1000, not \(query.limit)")
        let match = SearchText.fts5Query(text)
        guard !match.isEmpty else { return JobPage(jobs: [], nextCursor: nil) }
        if let states = query.states, states.isEmpty { return JobPage(jobs: [], nextCursor: nil) }
        var conditions = ["hit < ?"]
        var arguments: [Argument] = [.text(match), .int(query.before ?? Int64.max)]
        if let states = query.states {
            conditions.append("state IN (\(Columns.placeholders(states.count)))")
            arguments += states.map(\.rawValue).sorted().map(Argument.text)
        }
        if let definition = query.definition {
            conditions.append("definition = ?")
            arguments.append(.text(definition))
        }
        // The index's rowids are job ids; it gives them in descending order without a sort.
        let sql = """
            SELECT \(Columns.listed(values: query.values)) FROM jobs
            JOIN (SELECT rowid AS hit FROM jobs_search WHERE jobs_search MATCH ?) ON hit = jobs.id
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY hit DESC LIMIT ?
            """
        arguments.append(.int(Int64(query.limit)))
        let limit = query.limit
        return try await read(doing: "search jobs") { [arguments] db in
            let statement = try RawStatement(db, sql)
            for (index, argument) in arguments.enumerated() {
                switch argument {
                case .int(let value): try statement.bind(Int32(index + 1), value)
                case .text(let value): try statement.bind(Int32(index + 1), value)
                }
            }
            var unreadable: [JobStoreError] = []
            var read = 0
            var lastID: Int64?
            let jobs = try statement.rows({ row -> Job in
                read += 1
                lastID = row.int64(0)
                return try Columns.job(row)
            }, skipping: &unreadable)
            return JobPage(
                jobs: jobs, nextCursor: read == limit ? lastID : nil, unreadable: unreadable.map(UnreadableRow.init))
        }
    }
}
