import Foundation
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStoreSQLite

/// The search index (`jobs_search`, FTS5) on the writer's connection: it
/// writes its pending terms out at the end of each statement that changed
/// it inside a transaction, at a cost in proportion to a hash table that
/// only grows. A fan-out of N children paid that once per child, with a
/// table as large as the parent's N-line input: the cost of each child
/// grew with N.
@Suite struct SearchIndexResetTests {
    static let plan = [StagePlan(name: "work", kind: "then")]

    /// FTS5's write counter (the third varint of its structure record,
    /// `jobs_search_data` row 10): leaves written by its flushes, one or
    /// more each.
    static func searchWrites(_ store: SQLiteJobStore) async throws -> Int {
        let hex = try #require(try await store.scalar("SELECT hex(block) FROM jobs_search_data WHERE id = 10"))
        var bytes = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        bytes.removeFirst(4)  // the configuration cookie
        if bytes.starts(with: [0xFF, 0x00, 0x00, 0x01]) { bytes.removeFirst(4) }  // the record's second version
        var values: [Int] = []
        var value = 0
        for byte in bytes where values.count < 3 {
            value = value << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 {
                values.append(value)
                value = 0
            }
        }
        return try #require(values.count == 3 ? values[2] : nil)
    }

    static func claimParent(_ store: SQLiteJobStore, input: String) async throws -> ClaimedJob {
        _ = try await store.submit(NewJob(definition: "parent", input: Data(input.utf8), stages: plan))
        return try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
    }

    /// Starting 600 children writes the search index out a few times, not
    /// once per child: they go in a few statements.
    @Test func startingChildrenWritesTheSearchIndexOutAFewTimes() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        let items = (0..<600).map { "item \($0)" }
        let parent = try await Self.claimParent(store, input: items.joined(separator: "\n"))
        let before = try await Self.searchWrites(store)
        let children = items.map { NewJob(definition: "child", pool: "kids", input: Data($0.utf8), stages: Self.plan) }
        let outcome = try await store.joinChildren(
            ChildJoin(
                lease: parent.lease, position: 0, attempt: 1, parentAttempt: 1, failFast: true, children: children))
        #expect(outcome == .waiting(children: 600))
        // 256 + 256 + 64 + 16 + 8 children a statement.
        #expect(try await Self.searchWrites(store) - before <= 10)
        let kids = try await store.children(of: parent.job.id, limit: 1000)
        #expect(kids.map(\.itemIndex) == Array(0..<600))
        #expect(
            try await store.count(
                "SELECT count(*) FROM stages WHERE job_id IN (SELECT id FROM jobs WHERE parent_id = \(parent.job.id))")
                == 600)
        #expect(try await store.search("item", JobQuery(definition: "child", limit: 1000)).jobs.count == 600)
    }

    /// A value of 4 KiB or more through the index — a large input
    /// submitted, the end of a job with one, children whose inputs add up
    /// to that — makes the writer's connection drop its FTS5 state after
    /// the transaction; small ones do not. Search works on.
    @Test func aLargeValueMakesTheWriterDropItsSearchIndexState() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        _ = try await store.submit(
            NewJob(definition: "small", pool: "other", input: Data("a few words".utf8), stages: Self.plan))
        #expect(store.searchIndexResets == 0)
        let items = (0..<1000).map { "item \($0)" }
        let parent = try await Self.claimParent(store, input: items.joined(separator: "\n"))
        #expect(store.searchIndexResets == 1)
        let children = items.map { NewJob(definition: "child", pool: "kids", input: Data($0.utf8), stages: Self.plan) }
        _ = try await store.joinChildren(
            ChildJoin(
                lease: parent.lease, position: 0, attempt: 1, parentAttempt: 1, failFast: true, children: children))
        #expect(store.searchIndexResets == 2)
        let kid = try #require(
            try await store.claim(pool: "kids", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
        try await store.finish(
            JobFinish(lease: kid.lease, outcome: .fulfilled(Data("finished".utf8)), parentID: parent.job.id))
        #expect(store.searchIndexResets == 2)
        // A job whose input is large: its submit, then its end.
        _ = try await store.submit(
            NewJob(definition: "large", input: Data(items.reversed().joined(separator: " ").utf8), stages: Self.plan))
        #expect(store.searchIndexResets == 3)
        let large = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
        #expect(large.job.definition == "large")
        try await store.finish(JobFinish(lease: large.lease, outcome: .fulfilled(Data("done".utf8))))
        #expect(store.searchIndexResets == 4)
        #expect(try await store.search("999", JobQuery(definition: "parent")).jobs.map(\.id) == [parent.job.id])
        #expect(try await store.search("finished", JobQuery(definition: "child")).jobs.map(\.id) == [kid.job.id])
        _ = try await store.submit(
            NewJob(definition: "small", pool: "other", input: Data("more words".utf8), stages: Self.plan))
        #expect(try await store.search("more", JobQuery()).jobs.count == 1)
    }
}
