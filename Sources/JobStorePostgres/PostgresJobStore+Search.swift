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
        let matches = "\(PostgresSchema.searchVector) @@ plainto_tsquery('simple'::regconfig, $1)"
        return try await jobPage([matches, "id < $2"], binds, limit: "$3", query, doing: "search jobs")
    }
}
