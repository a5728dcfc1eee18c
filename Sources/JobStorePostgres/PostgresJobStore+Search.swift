import Foundation
import JobStore
internal import PostgresNIO

extension PostgresJobStore: JobSearchStore {
    /// The words, as a tsquery of `simple` words all required (`plainto_tsquery`: no character is an operator),
    /// on the `jobs_search` index; newest first.
    public func search(_ text: String, _ query: JobQuery) async throws -> JobPage {
        try Self.require((1...1000).contains(query.limit), "list limit must be within 1…1000, not \(query.limit)")
        let words = SearchText.words(text)
        guard !words.isEmpty else { return JobPage(jobs: [], nextCursor: nil) }
        if let states = query.states, states.isEmpty { return JobPage(jobs: [], nextCursor: nil) }
        var binds = PostgresBindings()
        binds.append(words.joined(separator: " "))
        binds.append(query.before ?? Int64.max)
        binds.append(query.limit)
        var conditions = ["\(PostgresSchema.searchVector) @@ plainto_tsquery('simple'::regconfig, $1)", "id < $2"]
        if let states = query.states {
            binds.append(states.map(\.rawValue).sorted())
            conditions.append("state = ANY($\(binds.count))")
        }
        if let definition = query.definition {
            binds.append(definition)
            conditions.append("definition = $\(binds.count)")
        }
        let sql = """
            SELECT \(PostgresQueryColumns.listed(values: query.values)) FROM {s}.jobs WHERE \(conditions.joined(separator: " AND "))
            ORDER BY id DESC LIMIT $3
            """
        let limit = query.limit
        return try await read(doing: "search jobs") { [binds] session in
            let jobs = try await session.connection.query(session.query(sql, binds: binds), logger: session.logger)
                .decode(PostgresQueryColumns.job)
            return JobPage(jobs: jobs, nextCursor: jobs.count == limit ? jobs.last?.id : nil)
        }
    }
}
