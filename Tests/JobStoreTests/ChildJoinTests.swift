import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// The join of child jobs in the store, on both stores: a waiting parent is
/// never claimed, the end of its last child makes it claimable again,
/// starting the children again creates none twice, fail-fast settles early.
@Suite struct ChildJoinTests {
    static let plan = [StagePlan(name: "work", kind: "then")]

    static func children(_ inputs: [String]) -> [NewJob] {
        inputs.map { NewJob(definition: "child", pool: "kids", input: Data($0.utf8), stages: plan) }
    }

    /// Claims the parent (pool `default`) and asks for its children's join.
    static func join(
        _ store: some StoreUnderTest, _ parent: ClaimedJob, _ inputs: [String], failFast: Bool = true
    ) async throws -> ChildJoinOutcome {
        try await store.joinChildren(
            ChildJoin(
                lease: parent.lease, position: 0, attempt: 1, parentAttempt: parent.job.attempt, failFast: failFast,
                children: children(inputs)))
    }

    static func finish(_ store: some StoreUnderTest, _ child: ClaimedJob, _ outcome: JobOutcome) async throws {
        try await store.finish(JobFinish(lease: child.lease, outcome: outcome, parentID: child.job.parentID))
    }

    @Test(arguments: StoreKind.allCases)
    func theLastChildsEndMakesTheWaitingParentClaimable(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(NewJob(definition: "parent", input: nil, stages: Self.plan)).id
        let parent = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
        #expect(try await Self.join(store, parent, ["a", "b", "c"]) == .waiting(children: 3))
        let waiting = try #require(try await store.job(id))
        #expect(waiting.job.state == .pending && waiting.job.waitingOn == 3 && waiting.job.leaseExpiresAt == nil)
        #expect(waiting.stages[0].state == .running)
        #expect(try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30)).isEmpty)
        let kids = try await store.claim(pool: "kids", owner: "e", limit: 10, leaseDuration: .seconds(30))
        #expect(kids.map(\.job.itemIndex) == [0, 1, 2])
        #expect(kids.allSatisfy { $0.job.parentID == id && $0.job.parentStage == 0 })
        try await Self.finish(store, kids[2], .fulfilled(Data("C".utf8)))
        try await Self.finish(store, kids[0], .fulfilled(Data("A".utf8)))
        #expect(try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30)).isEmpty)
        try await Self.finish(store, kids[1], .fulfilled(Data("B".utf8)))
        let again = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30)).first)
        #expect(again.job.id == id && again.job.claims == 2)
        // The stage runs again and starts its children again: none is created twice.
        guard case let .settled(outcomes) = try await Self.join(store, again, ["a", "b", "c"]) else {
            Issue.record("the join did not settle")
            return
        }
        #expect(outcomes.map(\.result) == ["A", "B", "C"].map { Data($0.utf8) })
        #expect(outcomes.map(\.id) == kids.map(\.job.id))
        #expect(try await store.children(of: id, limit: 10).count == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func failFastSettlesAtTheFirstRejectedChildAndCancelsTheRest(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(NewJob(definition: "parent", input: nil, stages: Self.plan)).id
        let parent = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
        #expect(try await Self.join(store, parent, ["a", "b", "c"]) == .waiting(children: 3))
        let kids = try await store.claim(pool: "kids", owner: "e", limit: 2, leaseDuration: .seconds(30))
        try await Self.finish(store, kids[1], .rejected("boom"))
        let again = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30)).first)
        guard case let .settled(outcomes) = try await Self.join(store, again, ["a", "b", "c"]) else {
            Issue.record("the join did not settle")
            return
        }
        #expect(outcomes.map(\.state) == [.running, .rejected, .cancelled])
        #expect(outcomes[1].error == "boom")
        // The running child is asked to stop; the pending one is cancelled.
        let renewal = try await store.renew([kids[0].lease], leaseDuration: .seconds(30))
        #expect(renewal.cancellationRequested == [kids[0].job.id])
        _ = id
    }

    @Test(arguments: StoreKind.allCases)
    func cancellingAWaitingParentCancelsItsChildren(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(NewJob(definition: "parent", input: nil, stages: Self.plan)).id
        let parent = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
        #expect(try await Self.join(store, parent, ["a", "b"], failFast: false) == .waiting(children: 2))
        let running = try #require(
            try await store.claim(pool: "kids", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
        #expect(try await store.requestCancellation(of: id) == .cancelled)
        let children = try await store.children(of: id, limit: 10)
        #expect(children.map(\.state) == [.running, .cancelled])
        let renewal = try await store.renew([running.lease], leaseDuration: .seconds(30))
        #expect(renewal.cancellationRequested == [running.job.id])
    }

    /// A child's end counts down its parent's wait without writing the
    /// parent's `jobs` row, which holds the parent's input — one item per
    /// child: rewritten by every end, it made a fan-out's cost grow with
    /// the square of its children. Only the end that ends the wait writes
    /// it. Seen as a trigger's count on SQLite, as the row version
    /// (`xmin`) on PostgreSQL.
    @Test(arguments: StoreKind.allCases)
    func aChildsEndWritesItsParentsRowOnlyWhenTheWaitEnds(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let items = ["a", "b", "c", "d"]
        let id = try await store.submit(
            NewJob(definition: "parent", input: Data(items.joined(separator: "\n").utf8), stages: Self.plan)
        ).id
        let parent = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
        #expect(try await Self.join(store, parent, items, failFast: false) == .waiting(children: 4))
        let version: @Sendable () async throws -> String?
        switch kind {
        case .sqlite:
            try await store.executeInWriteTransaction(
                """
                CREATE TABLE parent_writes (job_id INTEGER);
                CREATE TRIGGER parent_writes AFTER UPDATE ON jobs WHEN old.id = \(id)
                BEGIN INSERT INTO parent_writes VALUES (old.id); END;
                """)
            version = { try await store.scalar("SELECT count(*) FROM parent_writes") }
        case .postgres:
            version = { try await store.scalar("SELECT xmin::text FROM jobs WHERE id = \(id)") }
        }
        let waiting = try await version()
        let kids = try await store.claim(pool: "kids", owner: "e", limit: 10, leaseDuration: .seconds(30))
        #expect(kids.count == 4)
        try await Self.finish(store, kids[0], .fulfilled(Data("A".utf8)))
        try await Self.finish(store, kids[1], .rejected("boom"))
        try await Self.finish(store, kids[2], .fulfilled(Data("C".utf8)))
        #expect(try await version() == waiting)
        let detail = try #require(try await store.job(id))
        #expect(detail.job.state == .pending && detail.job.waitingOn == 1)
        #expect(try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30)).isEmpty)
        try await Self.finish(store, kids[3], .fulfilled(Data("D".utf8)))
        #expect(try await version() != waiting)
        let again = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30)).first)
        #expect(again.job.id == id && again.job.waitingOn == 0)
    }
}
