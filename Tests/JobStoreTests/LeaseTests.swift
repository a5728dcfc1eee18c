import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct LeaseTests {
    @Test(arguments: StoreKind.allCases)
    func claimTakesHighestPriorityThenOldest(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let low1 = try await store.submit(job(input: "low1", priority: 0)).id
        let high1 = try await store.submit(job(input: "high1", priority: 5)).id
        let low2 = try await store.submit(job(input: "low2", priority: 0)).id
        let high2 = try await store.submit(job(input: "high2", priority: 5)).id
        _ = try await store.submit(job(input: "elsewhere", pool: "other"))
        let claimed = try await store.claim(pool: "default", owner: "engine-1", limit: 3, leaseDuration: .seconds(30))
        #expect(claimed.map(\.job.id) == [high1, high2, low1])
        #expect(claimed.allSatisfy { $0.job.state == .running && $0.lease.owner == "engine-1" && $0.job.claims == 1 })
        #expect(claimed.allSatisfy { $0.stages.count == 3 && $0.resumePosition == 0 })
        #expect(claimed[0].resumeValue == Data("high1".utf8))
        let rest = try await store.claim(pool: "default", owner: "engine-1", limit: 10, leaseDuration: .seconds(30))
        #expect(rest.map(\.job.id) == [low2])
        #expect(
            try await store.claim(pool: "default", owner: "engine-1", limit: 10, leaseDuration: .seconds(30)).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func delayedJobIsNotClaimedBeforeItsTime(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let later = try await store.submit(job(input: "later", priority: 9, runAt: Date(timeIntervalSinceNow: 3600))).id
        let past = try await store.submit(job(input: "past", runAt: Date(timeIntervalSinceNow: -1))).id
        let now = try await store.submit(NewJob(definition: "d", delay: .zero, stages: [])).id
        let claimed = try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30))
        #expect(Set(claimed.map(\.job.id)) == [past, now])
        #expect(try await store.job(later)?.job.state == .pending)
    }

    /// The caller's own leases are spared, whatever their expiry reads (a
    /// wall clock stepped forward); the same job under an older claim is not.
    @Test(arguments: StoreKind.allCases)
    func requeueingSparesTheLeasesItIsGiven(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let ids = try await store.submit((0..<3).map { _ in job() }).map(\.id)
        let claimed = try await store.claim(pool: "default", owner: "me", limit: 3, leaseDuration: .milliseconds(1))
        try #require(claimed.map(\.job.id) == ids)
        try await Task.sleep(for: .milliseconds(20))
        var stale = claimed[2].lease
        stale.claim -= 1
        let requeued = try await store.requeueExpiredLeases(sparing: [claimed[0].lease, stale])
        #expect(requeued.sorted() == [ids[1], ids[2]])
        #expect(try await store.job(ids[0])?.job.state == .running, "spared")
        #expect(try await store.requeueExpiredLeases() == [ids[0]], "spared only when given")
    }

    @Test(arguments: StoreKind.allCases)
    func staleLeaseCannotWrite(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        let claimed = try #require(
            try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .milliseconds(1)).first)
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await store.requeueExpiredLeases() == [id])
        let again = try #require(
            try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(30)).first)
        #expect(again.lease.claim == 2)
        // Same owner, older claim: refused, and nothing changed.
        let error = await expectStoreError(.leaseLost) {
            try await store.recordStageResult(
                StageResult(lease: claimed.lease, position: 0, outcome: .fulfilled(Data("stale".utf8))))
        }
        #expect(error?.jobID == id)
        await expectStoreError(.leaseLost) {
            try await store.finish(JobFinish(lease: claimed.lease, outcome: .fulfilled(nil)))
        }
        #expect(try await store.job(id)?.stages[0].state == .pending)
        #expect(try await store.job(id)?.job.state == .running)
        // The current lease works.
        try await store.recordStageResult(
            StageResult(lease: again.lease, position: 0, outcome: .fulfilled(Data("fresh".utf8))))
        #expect(try await store.job(id)?.stages[0].value == Data("fresh".utf8))
    }

    /// A stage's start or result made again after a dropped connection can
    /// arrive after the same claim finished the job: refused, and said to
    /// be late — not a lost lease (nothing expired, nobody requeued it).
    @Test(arguments: StoreKind.allCases)
    func aWriteAfterItsOwnClaimFinishedTheJobIsLateNotLost(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        let lease = try #require(
            try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(30)).first
        ).lease
        try await store.finish(JobFinish(lease: lease, outcome: .fulfilled(nil)))
        let late = await expectStoreError(.leaseLost) {
            try await store.recordStageStart(StageStart(lease: lease, position: 0, attempt: 1))
        }
        #expect(late?.cameAfterOwnEnd == true)
        #expect(late?.message.contains("already fulfilled by this same claim") == true, "\(String(describing: late))")
        #expect(late?.message.contains("expired") == false, "\(String(describing: late))")
        #expect(try await store.job(id)?.job.state == .fulfilled)
        // Another claim's late write is a lost lease.
        var other = lease
        other.claim += 1
        let lost = await expectStoreError(.leaseLost) {
            try await store.recordStageResult(StageResult(lease: other, position: 0, outcome: .skipped))
        }
        #expect(lost?.cameAfterOwnEnd == false)
    }

    @Test(arguments: StoreKind.allCases)
    func renewExtendsHeldLeasesAndReportsLostAndCancelled(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let ids = try await store.submit([job(), job(), job()]).map(\.id)
        let claimed = try await store.claim(pool: "default", owner: "e", limit: 3, leaseDuration: .seconds(30))
        #expect(try await store.requestCancellation(of: ids[1]) == .requested)
        var foreign = claimed[2].lease
        foreign.owner = "someone-else"
        let renewal = try await store.renew(
            [claimed[0].lease, claimed[1].lease, foreign], leaseDuration: .seconds(600))
        #expect(renewal.renewed.map(\.jobID) == [ids[0], ids[1]])
        #expect(renewal.lost == [ids[2]])
        #expect(renewal.cancellationRequested == [ids[1]])
        #expect(renewal.renewed[0].expiresAt > claimed[0].lease.expiresAt)
        let stored = try #require(try await store.job(ids[0])?.job.leaseExpiresAt)
        #expect(abs(stored.timeIntervalSince(renewal.renewed[0].expiresAt)) < 0.002)
    }

    @Test(arguments: StoreKind.allCases)
    func expiredLeaseIsRequeuedAndResumesAfterFulfilledStages(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job(input: "in")).id
        let untouched = try await store.submit(job(input: "other")).id
        let first = try #require(
            try await store.claim(pool: "default", owner: "crashed", limit: 1, leaseDuration: .milliseconds(1)).first)
        let healthy = try #require(
            try await store.claim(pool: "default", owner: "alive", limit: 1, leaseDuration: .seconds(60)).first)
        #expect(healthy.job.id == untouched)
        try await store.recordStageResult(
            StageResult(lease: first.lease, position: 0, outcome: .fulfilled(Data("fetched".utf8)), exitCode: 0))
        try await store.recordStageStart(StageStart(lease: first.lease, position: 1))
        // The process dies here; its lease runs out.
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await store.requeueExpiredLeases() == [id])
        #expect(try await store.requeueExpiredLeases() == [])
        let requeued = try #require(try await store.job(id))
        #expect(requeued.job.state == .pending)
        #expect(requeued.stages.map(\.state) == [.fulfilled, .pending, .pending])
        #expect(try await store.job(untouched)?.job.state == .running)
        #expect(try await store.events(of: id).map(\.kind) == ["requeued"])

        let resumed = try #require(
            try await store.claim(pool: "default", owner: "new", limit: 1, leaseDuration: .seconds(60)).first)
        #expect(resumed.job.id == id)
        #expect(resumed.resumePosition == 1)
        #expect(resumed.resumeValue == Data("fetched".utf8))
        #expect(resumed.job.claims == 2)
        #expect(resumed.job.attempt == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func expiredLeaseWithCancellationRequestedEndsCancelled(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let id = try await store.submit(job()).id
        _ = try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .milliseconds(1))
        #expect(try await store.requestCancellation(of: id) == .requested)
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await store.requeueExpiredLeases() == [id])
        let detail = try #require(try await store.job(id))
        #expect(detail.job.state == .cancelled)
        #expect(detail.stages.allSatisfy { $0.state == .skipped })
    }
}

/// Claims go level by level: a delayed job of a high priority never holds
/// back a runnable one of a lower priority, and order within and across
/// levels is unchanged.
@Suite struct ClaimLevelTests {
    @Test(arguments: StoreKind.allCases)
    func delayedJobsOfEveryLevelAreSkippedAndTheRestComeInOrder(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let later = Date(timeIntervalSinceNow: 3600)
        _ = try await store.submit((0..<50).map { _ in job(input: "later-9", priority: 9, runAt: later) })
        let low = try await store.submit(job(input: "low", priority: -3)).id
        _ = try await store.submit((0..<50).map { _ in job(input: "later-1", priority: 1, runAt: later) })
        let mid1 = try await store.submit(job(input: "mid1", priority: 1)).id
        let mid2 = try await store.submit(job(input: "mid2", priority: 1)).id
        let high = try await store.submit(job(input: "high", priority: 7)).id
        let claimed = try await store.claim(pool: "default", owner: "e", limit: 3, leaseDuration: .seconds(30))
        #expect(claimed.map(\.job.id) == [high, mid1, mid2])
        let rest = try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30))
        #expect(rest.map(\.job.id) == [low])
        #expect(try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30)).isEmpty)
    }
}

/// Leases of runners known dead end at once.
@Suite struct LeaseTakeoverTests {
    @Test(arguments: StoreKind.allCases)
    func expiringTheLeasesOfADeadOwnerRequeuesItsJobsAtOnce(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(job(input: "one")).id
        let second = try await store.submit(job(input: "two")).id
        let dead = try await store.claim(pool: "default", owner: "dead", limit: 1, leaseDuration: .seconds(600))
        _ = try await store.claim(pool: "default", owner: "alive", limit: 1, leaseDuration: .seconds(600))
        #expect(try await store.leaseOwners() == ["dead": 1, "alive": 1])
        #expect(try await store.requeueExpiredLeases().isEmpty, "ten-minute leases have not expired")

        #expect(try await store.expireLeases(of: ["dead"]) == 1)
        let requeued = try await store.requeueExpiredLeases()
        #expect(requeued == dead.map(\.job.id))
        #expect(Set(requeued).isSubset(of: [first, second]))
        #expect(try await store.leaseOwners() == ["alive": 1])
        #expect(try await store.job(requeued[0])?.job.state == .pending)
        #expect(try await store.expireLeases(of: ["nobody"]) == 0)
    }
}
