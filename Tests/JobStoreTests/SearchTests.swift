import Foundation
import Testing

@_spi(Maintenance) @testable import JobStore

/// `JobSearchStore`: words of the input, result, error and key; every word
/// required; what the user types is never SQL nor a query operator.
@Suite struct SearchTests {
    @Test(arguments: StoreKind.allCases)
    func findsJobsByTheWordsOfTheirValues(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let search = try #require(store as? any JobSearchStore)
        let ids = try await store.submit([
            job(input: "invoice 1234 for ACME Corp"),
            job("other", input: "invoice 99", key: "acme-2026"),
            job(input: "nothing to see"),
        ]).map(\.id)
        let claimed = try await store.claim(pool: "default", owner: "e", limit: 3, leaseDuration: .seconds(60))
        let third = try #require(claimed.first { $0.lease.jobID == ids[2] })
        try await store.finish(JobFinish(lease: third.lease, outcome: .rejected("disk full on /var")))

        func found(_ text: String, _ query: JobQuery = JobQuery(limit: 10)) async throws -> [Int64] {
            try await search.search(text, query).jobs.map(\.id)
        }
        #expect(try await found("invoice") == [ids[1], ids[0]])
        #expect(try await found("ACME invoice") == [ids[1], ids[0]])  // the second by its key
        #expect(try await found("acme CORP") == [ids[0]])
        #expect(try await found("acme") == [ids[1], ids[0]])  // the key's words too
        #expect(try await found("Disk FULL") == [ids[2]])  // an error, written after the submit
        #expect(try await found("invoice", JobQuery(definition: "other", limit: 10)) == [ids[1]])
        #expect(try await found("invoice", JobQuery(limit: 1)).count == 1)
        #expect(try await search.search("invoice", JobQuery(limit: 1)).nextCursor == ids[1])
        #expect(try await found("invoice", JobQuery(limit: 10, before: ids[1])) == [ids[0]])
        // Operators and quotes are words or nothing; never a syntax error, never SQL.
        for hostile in ["\"", "invoice\" OR \"x", "' OR 1=1 --", "NEAR(a b)", "*", "inv*", "a AND NOT b", ""] {
            _ = try await found(hostile)
        }
        #expect(try await found("' OR 1=1 --").isEmpty)
        // A bulk action's filter takes the words too.
        let actions = try #require(store as? any JobActionStore)
        let all = 1...Int64.max
        #expect(try await actions.countMatching(JobSelection(match: "invoice"), for: .cancel, ids: all).count == 2)
        #expect(try await actions.countMatching(JobSelection(match: "disk"), for: .retry, ids: all).count == 1)
        #expect(try await actions.countMatching(JobSelection(match: "\""), for: .cancel, ids: all).count == 0)
        // Deleted and retried jobs leave the index as they leave the table.
        _ = try await store.retry(ids[2])
        #expect(try await found("disk").isEmpty)
    }
}
