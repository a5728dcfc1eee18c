import Foundation
import JobValues
import Synchronization
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// What several processes sharing one database rely on: schedule
/// occurrences fire once, one leader per chore, wake-ups.
@Suite struct ScheduleOccurrenceTests {
    @Test(arguments: StoreKind.allCases)
    func anOccurrenceIsOneJobHoweverOftenItIsSubmitted(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let at = Date(timeIntervalSince1970: 1_800_000_000.250)
        func occurrence(_ definition: String = "nightly", _ time: Date = at, input: String = "a") -> NewJob {
            NewJob(definition: definition, input: Data(input.utf8), scheduledFor: time, stages: threeStages)
        }
        let first = try await store.submit(occurrence())
        let again = try await store.submit(occurrence(input: "b"))
        #expect(first.created && !again.created && again.id == first.id)
        let batch = try await store.submit([
            occurrence("nightly", at + 60), occurrence("nightly", at + 60), occurrence("other"),
        ])
        #expect(batch[0].created && !batch[1].created && batch[1].id == batch[0].id)
        #expect(batch[2].created && batch[2].id != first.id)
        let detail = try #require(try await store.job(first.id))
        #expect(detail.job.scheduledFor == at)
        #expect(detail.job.input == Data("a".utf8), "the first submit wins")
        // Jobs without an occurrence are never matched to one another.
        let plain = try await store.submit([job(), job()])
        #expect(plain.allSatisfy(\.created) && plain[0].id != plain[1].id)
        #expect(try await store.job(plain[0].id)?.job.scheduledFor == nil)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 5)
    }

    /// Two hosts firing the same occurrences at once make one job each.
    @Test(arguments: StoreKind.allCases)
    func hostsRacingOnAnOccurrenceMakeOneJob(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        let other = try await scope.openAnother()
        let base = Date(timeIntervalSince1970: 1_800_000_000)
        let occurrences = (0..<20).map { NewJob(definition: "tick", scheduledFor: base + Double($0) * 60, stages: []) }
        async let fromA = store.submit(occurrences)
        async let fromB = other.submit(occurrences)
        let (a, b) = try await (fromA, fromB)
        #expect(a.map(\.id) == b.map(\.id))
        #expect(zip(a, b).allSatisfy { $0.created != $1.created })
        #expect(try await store.count("SELECT count(*) FROM jobs") == 20)
    }
}

@Suite struct LeadershipTests {
    @Test(arguments: StoreKind.allCases)
    func oneOwnerHoldsARoleUntilItLetsGoOrItsLeaseRunsOut(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        let other = try await scope.openAnother()
        #expect(try await store.acquireLeadership(of: "maintenance", owner: "web-1", for: .seconds(60)))
        #expect(try await !other.acquireLeadership(of: "maintenance", owner: "web-2", for: .seconds(60)))
        #expect(try await store.acquireLeadership(of: "maintenance", owner: "web-1", for: .seconds(60)), "renewed")
        #expect(try await other.acquireLeadership(of: "schedules", owner: "web-2", for: .seconds(60)), "another role")
        // Let go: the other takes it at once.
        try await store.releaseLeadership(of: "maintenance", owner: "web-1")
        #expect(try await other.acquireLeadership(of: "maintenance", owner: "web-2", for: .seconds(60)))
        #expect(try await !store.acquireLeadership(of: "maintenance", owner: "web-1", for: .seconds(60)))
        // web-2 renews for a moment only, then stops: once that ran out, web-1 takes over.
        #expect(try await other.acquireLeadership(of: "maintenance", owner: "web-2", for: .milliseconds(200)))
        try await Task.sleep(for: .milliseconds(400))
        #expect(try await store.acquireLeadership(of: "maintenance", owner: "web-1", for: .seconds(60)))
        #expect(try await !other.acquireLeadership(of: "maintenance", owner: "web-2", for: .seconds(60)))
        // Releasing what one does not hold changes nothing.
        try await other.releaseLeadership(of: "maintenance", owner: "web-2")
        #expect(try await !other.acquireLeadership(of: "maintenance", owner: "web-2", for: .seconds(60)))
        await expectStoreError(.invalidArgument) {
            try await store.acquireLeadership(of: "", owner: "x", for: .seconds(1))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func ownersRacingForARoleGetOneLeader(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        let other = try await scope.openAnother()
        let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
            for owner in 0..<16 {
                group.addTask {
                    try await (owner % 2 == 0 ? store : other).acquireLeadership(
                        of: "race", owner: "o\(owner)", for: .seconds(60))
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(winners == 1)
    }
}

@Suite struct WakeUpTests {
    /// SQLite's wake-ups come over jobd's control socket: its stream never yields.
    @Test func sqliteStreamNeverYieldsAndEndsWithItsReader() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        let reader = Task { () -> Int in
            var count = 0
            for await _ in store.wakeUps() { count += 1 }
            return count
        }
        _ = try await store.submit(job())
        try await Task.sleep(for: .milliseconds(100))
        reader.cancel()
        #expect(await reader.value == 0)
    }

    /// A submit, a cancel and a retry on one host wake the others at once.
    @Test func postgresWakesOtherHosts() async throws {
        let (store, scope) = try await makeStore(.postgres)
        let listening = try #require(try await scope.openAnother() as? PostgresJobStore)
        let heard = Mutex<[StoreWakeUp]>([])
        let reader = Task {
            for await wakeUp in listening.wakeUps() { heard.withLock { $0.append(wakeUp) } }
        }
        defer { reader.cancel() }
        try await waitUntil("the LISTEN connection is up") { listening.wakeUpStatus.listening }
        let id = try await store.submit(job(pool: "reports")).id
        try await waitUntil("the submit is heard") { heard.withLock { $0.contains(.runnable(pool: "reports")) } }
        let claimed = try #require(
            try await store.claim(pool: "reports", owner: "a", limit: 1, leaseDuration: .seconds(60)).first)
        #expect(try await store.requestCancellation(of: id) == .requested)
        try await waitUntil("the cancel is heard") { heard.withLock { $0.contains(.cancellationRequested(jobID: id)) } }
        try await store.finish(JobFinish(lease: claimed.lease, outcome: .cancelled(nil)))
        heard.withLock { $0 = [] }
        _ = try await store.retry(id)
        try await waitUntil("the retry is heard") { heard.withLock { $0.contains(.runnable(pool: "reports")) } }
    }
}

/// Polls `condition` every 10 ms for up to `timeout`.
func waitUntil(
    _ what: String, timeout: Duration = .seconds(5), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
