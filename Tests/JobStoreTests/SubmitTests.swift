import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct SubmitTests {
    @Test(arguments: StoreKind.allCases)
    func submittedJobIsPendingWithItsStagePlan(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let submission = try await store.submit(job(input: "hello", priority: 3))
        #expect(submission.created)
        let detail = try #require(try await store.job(submission.id))
        #expect(detail.job.state == .pending)
        #expect(detail.job.definition == "report")
        #expect(detail.job.priority == 3)
        #expect(detail.job.attempt == 1)
        #expect(detail.job.input == Data("hello".utf8))
        #expect(detail.stages.map(\.position) == [0, 1, 2])
        #expect(detail.stages.map(\.name) == ["fetch", "total", "publish"])
        #expect(detail.stages.map(\.kind) == ["then", "map", "done"])
        #expect(detail.stages.allSatisfy { $0.state == .pending && $0.attempts == 0 && $0.value == nil })
    }

    @Test(arguments: StoreKind.allCases)
    func batchIsOneTransactionAllOrNothing(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind, maxValueBytes: 100)
        _ = scope
        let ids = try await store.submit((0..<5).map { job(input: "line \($0)") })
        #expect(ids.count == 5)
        #expect(Set(ids.map(\.id)).count == 5)
        // One job of the batch is refused: none of the batch is stored.
        var batch = (0..<5).map { job("other", input: "line \($0)") }
        batch[3].input = Data(repeating: 65, count: 101)
        await expectStoreError(.valueTooLarge) { try await store.submit(batch) }
        #expect(try await store.count("SELECT count(*) FROM jobs WHERE definition = 'other'") == 0)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 5)
    }

    @Test(arguments: StoreKind.allCases)
    func badArgumentsAreRefusedWithNothingWritten(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        await expectStoreError(.invalidArgument) { try await store.submit(job("")) }
        await expectStoreError(.invalidArgument) {
            try await store.submit(job(stages: [StagePlan(name: "", kind: "then")]))
        }
        #expect(try await store.count("SELECT count(*) FROM jobs") == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func idempotencyKeyReturnsTheExistingJob(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(job(input: "a", key: "order-17"))
        let second = try await store.submit(job(input: "b", key: "order-17"))
        #expect(first.created)
        #expect(!second.created)
        #expect(second.id == first.id)
        // Same key within one batch, and the same key under another definition.
        let batch = try await store.submit([job(key: "k2"), job(key: "k2"), job("other", key: "order-17")])
        #expect(batch[0].created && !batch[1].created && batch[1].id == batch[0].id)
        #expect(batch[2].created && batch[2].id != first.id)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 3)
        // The first input wins.
        #expect(try await store.job(first.id)?.job.input == Data("a".utf8))
    }

    @Test(arguments: StoreKind.allCases)
    func idempotencyKeysHoldUnderConcurrentSubmits(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        // 40 submitters race on the same 10 keys, through the store's writer.
        let results = try await withThrowingTaskGroup(of: [Submission].self) { group in
            for submitter in 0..<40 {
                group.addTask {
                    try await store.submit((0..<10).map { job(input: "from \(submitter)", key: "key-\($0)") })
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for key in 0..<10 {
            let ids = Set(results.map { $0[key].id })
            #expect(ids.count == 1, "key-\(key) got several jobs: \(ids)")
        }
        #expect(results.flatMap { $0 }.filter(\.created).count == 10)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 10)
        // And across two stores on one file (two connections, as two processes would have).
        let other = try await scope.openAnother()
        async let a = store.submit((0..<10).map { job(key: "again-\($0)") })
        async let b = other.submit((0..<10).map { job(key: "again-\($0)") })
        let (fromA, fromB) = try await (a, b)
        #expect(fromA.map(\.id) == fromB.map(\.id))
        #expect(try await store.count("SELECT count(*) FROM jobs") == 20)
    }
}
