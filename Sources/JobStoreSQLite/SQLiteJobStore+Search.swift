import Foundation
internal import GRDB
import JobStore

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
        let (extraTerms, extraArguments) = Self.filterTerms(query)
        arguments += extraArguments
        // The index's rowids are job ids; it gives them in descending order without a sort.
        let sql = """
            SELECT \(Columns.listed(values: query.values)) FROM jobs
            JOIN (SELECT rowid AS hit FROM jobs_search WHERE jobs_search MATCH ?) ON hit = jobs.id
            WHERE \(conditions.joined(separator: " AND "))\(extraTerms) ORDER BY hit DESC LIMIT ?
            """
        arguments.append(.int(Int64(query.limit)))
        return try await jobPage(sql, arguments, limit: query.limit, doing: "search jobs")
    }
}
