import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// The dashboard's read of one job's page, on both stores.
protocol JobPageReading {
    func jobPage(_ query: JobPageQuery) async throws -> JobPageRead?
    func jobValue(_ id: Int64, _ place: JobPageRead.ValuePlace) async throws -> Data?
}

extension SQLiteJobStore: JobPageReading {}
extension PostgresJobStore: JobPageReading {}

@Suite struct JobPageReadTests {
    /// A job of 250 stages, an earlier attempt, 450 events, a 200 KB input
    /// and a 100 KB binary stage value: the page's read holds the range of
    /// stages, the page of events and the beginning of each value asked for,
    /// with the counts and whole sizes of the rest.
    @Test(arguments: StoreKind.allCases)
    func readsOnlyWhatThePageShows(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let reader = try #require(store as? any JobPageReading)
        let stages = (0..<250).map { StagePlan(name: "s\($0)", kind: "then") }
        let input = String(repeating: "é", count: 100_000)  // 200,000 bytes
        let id = try await store.submit(job("big", input: input, stages: stages)).id
        let binary = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) | 0x80 })

        // Attempt 1 rejected and retried; attempt 2 fulfilled.
        var lease = try #require(
            try await store.claim(pool: "default", owner: "t", limit: 1, leaseDuration: .seconds(60)).first
        ).lease
        try await store.recordStageResult(StageResult(lease: lease, position: 120, outcome: .rejected("first try")))
        try await store.finish(JobFinish(lease: lease, outcome: .rejected("first try")))
        _ = try await store.retry(id)
        lease = try #require(
            try await store.claim(pool: "default", owner: "t", limit: 1, leaseDuration: .seconds(60)).first
        ).lease
        try await store.recordStageResult(StageResult(lease: lease, position: 5, outcome: .fulfilled(binary)))
        try await store.recordStageResult(
            StageResult(lease: lease, position: 120, outcome: .fulfilled(Data("ok".utf8))))
        try await store.finish(JobFinish(lease: lease, outcome: .fulfilled(Data("done".utf8))))
        try await store.executeInWriteTransaction(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 450)
            INSERT INTO events (job_id, position, kind, message, created_at)
            SELECT \(id), 0, 'retry', 'event ' || i, (SELECT created_at FROM jobs WHERE id = \(id)) FROM n
            """)

        let query = JobPageQuery(
            id: id, firstStage: 100, stageLimit: 50, eventLimit: 200, attemptLimit: 10, valueCharacters: 1_000,
            textCharacters: 100)
        let read = try #require(try await reader.jobPage(query))
        #expect(read.job.state == .fulfilled)
        #expect(read.job.input == Data(String(repeating: "é", count: 1_000).utf8), "1,000 characters, not bytes")
        #expect(read.wholeBytes[.input] == 200_000)
        #expect(read.wholeBytes[.result] == nil, "a value shown whole has no whole size")
        #expect(read.stages.map(\.position) == Array(100..<150))
        #expect(read.stageCount == 250)
        #expect(read.stages.first { $0.position == 120 }?.value == Data("ok".utf8))
        #expect(read.attemptCount == 1)
        #expect(read.history.map(\.attempt) == [1])
        #expect(read.history.first?.stages.map(\.position) == Array(100..<150))
        #expect(read.history.first?.stages.first { $0.position == 120 }?.error == "first try")
        #expect(read.eventCount == 450)
        #expect(read.events.map(\.message) == (251...450).map { "event \($0)" })

        // The next page of events, and the stages from 0 with the binary value cut in bytes.
        var older = query
        older.eventsBefore = read.events.first?.id
        older.firstStage = 0
        let next = try #require(try await reader.jobPage(older))
        #expect(next.events.map(\.message) == (51...250).map { "event \($0)" })
        #expect(next.stages.map(\.position) == Array(0..<50))
        #expect(next.stages[5].value == binary.prefix(1_000))
        #expect(next.wholeBytes[.stageValue(attempt: nil, position: 5)] == 100_000)

        #expect(try await reader.jobPage(JobPageQuery(id: id + 1)) == nil)

        // The whole values behind the page's links.
        #expect(try await reader.jobValue(id, .input) == Data(input.utf8))
        #expect(try await reader.jobValue(id, .stageValue(attempt: nil, position: 5)) == binary)
        #expect(try await reader.jobValue(id, .result) == Data("done".utf8))
        #expect(try await reader.jobValue(id, .stageError(attempt: 1, position: 120)) == Data("first try".utf8))
        #expect(try await reader.jobValue(id, .attemptError(1)) == Data("first try".utf8))
        #expect(try await reader.jobValue(id, .stageValue(attempt: nil, position: 250)) == nil)
        #expect(try await reader.jobValue(id + 1, .input) == nil)
        try await store.close()
    }
}
