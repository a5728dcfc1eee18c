import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Jobs that run after others (`jobctl submit --after`), on both stores.
@Suite struct AfterTests {
    static func after(_ ids: [Int64], anyEnd: Bool = false, input: String = "") -> NewJob {
        var new = job(input: input)
        new.after = ids
        new.afterAnyEnd = anyEnd
        return new
    }

    static func claimOne(_ store: some StoreUnderTest, _ id: Int64) async throws -> ClaimedJob? {
        try await store.claim(pool: "default", owner: "e", limit: 100, leaseDuration: .seconds(30))
            .first { $0.job.id == id }
    }

    @Test(arguments: StoreKind.allCases)
    func aJobRunsAfterItsDependenciesFulfil(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(job(input: "1")).id
        let second = try await store.submit(job(input: "2")).id
        let third = try await store.submit(Self.after([first, second])).id
        // A chain: the fourth after the third.
        let fourth = try await store.submit(Self.after([third])).id
        #expect(try await store.job(third)?.job.waitingOn == 2)
        let claimed = try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30))
        #expect(claimed.map(\.job.id) == [first, second])
        try await store.finish(JobFinish(lease: claimed[0].lease, outcome: .fulfilled(Data())))
        #expect(try await Self.claimOne(store, third) == nil)
        try await store.finish(JobFinish(lease: claimed[1].lease, outcome: .fulfilled(Data())))
        let running = try #require(try await Self.claimOne(store, third))
        #expect(try await store.job(fourth)?.job.state == .pending)
        try await store.finish(JobFinish(lease: running.lease, outcome: .fulfilled(Data())))
        #expect(try await Self.claimOne(store, fourth) != nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aRejectedDependencyCancelsItsDependentsWithAReasonNamingIt(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(job(input: "1")).id
        let dependent = try await store.submit(Self.after([first])).id
        let chained = try await store.submit(Self.after([dependent])).id
        let anyway = try await store.submit(Self.after([first], anyEnd: true)).id
        let claimed = try #require(try await Self.claimOne(store, first))
        try await store.finish(JobFinish(lease: claimed.lease, outcome: .rejected("no")))
        let cancelled = try #require(try await store.job(dependent)?.job)
        #expect(cancelled.state == .cancelled)
        #expect(cancelled.error == "cancelled: job \(first), which it runs after, was rejected")
        let cascaded = try #require(try await store.job(chained)?.job)
        #expect(cascaded.state == .cancelled)
        #expect(cascaded.error == "cancelled: job \(dependent), which it runs after, was cancelled")
        #expect(try await Self.claimOne(store, anyway) != nil, "--after-any-end runs anyway")
        // Submitted after a job already rejected: cancelled at once.
        let late = try await store.submit(Self.after([first])).id
        #expect(try await store.job(late)?.job.state == .cancelled)
        // Only existing jobs can be named.
        _ = await expectStoreError(.jobNotFound) { try await store.submit(Self.after([999_999])) }
    }
}
