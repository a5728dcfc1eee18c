import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Unique keys (``NewJob/unique``): one job holds a key of its definition
/// at a time, on both stores.
@Suite struct UniqueSubmitTests {
    func unique(
        _ key: String, input: String? = nil, runAt: Date? = nil, whileRunning: Bool = true, period: Duration? = nil,
        onConflict: UniqueKey.OnConflict = .skip
    ) -> NewJob {
        var new = job("sync", input: input, runAt: runAt)
        new.unique = UniqueKey(key: key, whileRunning: whileRunning, period: period, onConflict: onConflict)
        return new
    }

    func heldKey(_ id: Int64, _ store: any StoreUnderTest) async throws -> String? {
        try await store.scalar("SELECT unique_key FROM jobs WHERE id = \(id)")
    }

    /// Pending and running jobs hold their key; the end of the job frees
    /// it in the same write, and the next submit makes a new job.
    @Test(arguments: StoreKind.allCases)
    func aDuplicateWhilePendingOrRunningGetsTheHolder(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(unique("a"))
        #expect(first.created && !first.duplicate)
        #expect(try await store.submit(unique("a")) == Submission(id: first.id, created: false, duplicate: true))
        let other = try await store.submit(unique("b"))
        #expect(other.created, "another key")
        var elsewhere = unique("a")
        elsewhere.definition = "other"
        #expect(try await store.submit(elsewhere).created, "the same key of another definition")
        let claimed = try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(30))
        #expect(claimed.map(\.job.id) == [first.id])
        #expect(try await store.submit(unique("a")) == Submission(id: first.id, created: false, duplicate: true))
        try await store.finish(JobFinish(lease: claimed[0].lease, outcome: .fulfilled(nil)))
        #expect(try await heldKey(first.id, store) == nil)
        let next = try await store.submit(unique("a"))
        #expect(next.created && next.id != first.id)
        #expect(try await store.count("SELECT count(*) FROM jobs WHERE definition = 'sync'") == 3)
    }

    /// `while: [pending]`: the claim frees the key.
    @Test(arguments: StoreKind.allCases)
    func aPendingOnlyKeyIsFreedByTheClaim(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(unique("a", whileRunning: false))
        #expect(try await store.submit(unique("a", whileRunning: false)).duplicate)
        _ = try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(30))
        #expect(try await heldKey(first.id, store) == nil)
        let second = try await store.submit(unique("a", whileRunning: false))
        #expect(second.created && second.id != first.id)
    }

    /// A cancel, a delete: the key is free again.
    @Test(arguments: StoreKind.allCases)
    func cancelAndDeleteFreeTheKey(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(unique("a")).id
        #expect(try await store.requestCancellation(of: first) == .cancelled)
        #expect(try await heldKey(first, store) == nil)
        let second = try await store.submit(unique("a"))
        #expect(second.created)
        try await store.executeInWriteTransaction("DELETE FROM jobs WHERE id = \(second.id)")
        #expect(try await store.submit(unique("a")).created)
    }

    /// `period`: the key stays held after the job ends, until the period
    /// from its submit is over.
    @Test(arguments: StoreKind.allCases)
    func aPeriodHoldsTheKeyPastTheEnd(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(unique("a", period: .seconds(3600))).id
        let claimed = try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(30))
        try await store.finish(JobFinish(lease: claimed[0].lease, outcome: .fulfilled(nil)))
        #expect(try await heldKey(first, store) == "a")
        #expect(try await store.submit(unique("a", period: .seconds(3600))).id == first)
        try await store.executeInWriteTransaction(
            "UPDATE jobs SET unique_until = '2000-01-01T00:00:00.000Z' WHERE id = \(first)")
        let second = try await store.submit(unique("a", period: .seconds(3600)))
        #expect(second.created && second.id != first)
        #expect(try await heldKey(first, store) == nil)
    }

    /// A running job whose lease expired (its host gone) holds its key no
    /// longer: the next submit makes a new job, and the old one is
    /// cancelled at its requeue instead of running beside it.
    @Test(arguments: StoreKind.allCases)
    func anExpiredLeaseFreesTheKey(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let first = try await store.submit(unique("a")).id
        _ = try await store.claim(pool: "default", owner: "gone", limit: 1, leaseDuration: .milliseconds(1))
        try await Task.sleep(for: .milliseconds(20))
        let second = try await store.submit(unique("a"))
        #expect(second.created && second.id != first)
        #expect(try await store.requeueExpiredLeases() == [first])
        #expect(try await store.job(first)?.job.state == .cancelled)
        #expect(try await heldKey(second.id, store) == "a")
        #expect(
            try await store.count("SELECT count(*) FROM events WHERE kind = 'unique-key-taken' AND job_id = \(first)")
                == 1)
    }

    /// `replace-input` and `reschedule` change a pending holder only.
    @Test(arguments: StoreKind.allCases)
    func onConflictChangesAPendingHolder(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let later = Date(timeIntervalSinceNow: 3600)
        let first = try await store.submit(unique("a", input: "old", runAt: later)).id
        #expect(try await store.submit(unique("a", input: "new")).id == first)
        #expect(try await store.job(first)?.job.input == Data("old".utf8), "skip changes nothing")
        #expect(try await store.submit(unique("a", input: "new", onConflict: .replaceInput)).id == first)
        #expect(try await store.job(first)?.job.input == Data("new".utf8))
        #expect(try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(30)).isEmpty)
        let now = Date()
        #expect(try await store.submit(unique("a", runAt: now, onConflict: .reschedule)).id == first)
        let claimed = try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(30))
        #expect(claimed.map(\.job.id) == [first], "moved to now")
        #expect(try await store.submit(unique("a", input: "newer", onConflict: .replaceInput)).id == first)
        #expect(try await store.job(first)?.job.input == Data("new".utf8), "a running job keeps its input")
    }

    /// A schedule's occurrence whose key another job holds makes no job,
    /// and says so on that job.
    @Test(arguments: StoreKind.allCases)
    func anOccurrenceWhoseKeyIsHeldMakesNoJob(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let holder = try await store.submit(unique("a")).id
        var fired = unique("a")
        fired.scheduledFor = Date(timeIntervalSince1970: 1_800_000_000)
        let occurrence = ScheduleOccurrence(
            definition: "sync", schedule: "every: 1h", at: fired.scheduledFor!, job: fired, overlap: .allow)
        #expect(try await store.fireOccurrence(occurrence) == .duplicate(job: holder))
        #expect(
            try await store.count(
                "SELECT count(*) FROM events WHERE kind = 'schedule-skipped' AND job_id = \(holder)") == 1)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 1)
    }

    /// Stores of their own (other hosts, on PostgreSQL) submitting the same
    /// keys at once, in batches in opposite orders: one job per key, no error.
    @Test(arguments: StoreKind.allCases)
    func concurrentSubmitsMakeOneJobPerKey(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        var stores: [any StoreUnderTest] = [store]
        for _ in 1..<4 { stores.append(try await scope.openAnother()) }
        let keys = (0..<10).map { "key-\($0)" }
        let results = try await withThrowingTaskGroup(of: [Submission].self) { group in
            for (index, submitter) in stores.enumerated() {
                let ordered = index.isMultiple(of: 2) ? keys : keys.reversed()
                group.addTask { try await submitter.submit(ordered.map { unique($0) }) }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(results.filter(\.created).count == keys.count)
        #expect(Set(results.map(\.id)).count == keys.count)
        #expect(try await store.count("SELECT count(*) FROM jobs") == keys.count)
    }
}
