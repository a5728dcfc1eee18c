import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// The claim under concurrency limits (``ClaimFlow``), on both stores.
@Suite struct FlowClaimTests {
    func limited(_ key: String?, input: String? = nil, priority: Int = 0) -> NewJob {
        var new = job("limited", input: input, priority: priority)
        new.limitKey = key
        return new
    }

    /// A full definition is passed over; the jobs behind it are claimed.
    @Test(arguments: StoreKind.allCases)
    func aGlobalLimitHoldsAndTheJobsBehindItAreClaimed(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let flow = ClaimFlow(limits: ["limited": ConcurrencyLimit(global: 2)])
        let first = try await store.submit((0..<3).map { _ in limited("") }).map(\.id)
        let free = try await store.submit([job("free"), job("free")]).map(\.id)
        let claimed = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(claimed.map(\.job.id) == [first[0], first[1]] + free)
        // Another host counts the same running jobs.
        #expect(
            try await store.claim(pool: "default", owner: "b", limit: 10, leaseDuration: .seconds(30), flow: flow)
                .isEmpty)
        try await store.finish(JobFinish(lease: claimed[0].lease, outcome: .fulfilled(nil)))
        let next = try await store.claim(
            pool: "default", owner: "b", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(next.map(\.job.id) == [first[2]])
    }

    /// A pool's limit counts the running jobs of all its limited definitions.
    @Test(arguments: StoreKind.allCases)
    func aPoolLimitHoldsAcrossItsDefinitions(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let flow = ClaimFlow(pool: 3)
        var jobs = [job("a"), job("b"), job("a"), job("b")]
        for index in jobs.indices { jobs[index].limitKey = "" }
        let ids = try await store.submit(jobs).map(\.id)
        let claimed = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(claimed.map(\.job.id) == Array(ids.prefix(3)))
        #expect(
            try await store.claim(pool: "default", owner: "b", limit: 10, leaseDuration: .seconds(30), flow: flow)
                .isEmpty)
        try await store.finish(JobFinish(lease: claimed[1].lease, outcome: .fulfilled(nil)))
        let next = try await store.claim(
            pool: "default", owner: "b", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(next.map(\.job.id) == [ids[3]])
    }

    /// `perKey: 1`: the first job of each key, in the claim's order
    /// (priority, then the oldest); a key's next job once its running one ends.
    @Test(arguments: StoreKind.allCases)
    func oneAtATimePerKeyInSubmissionOrder(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let flow = ClaimFlow(limits: ["limited": ConcurrencyLimit(perKey: 1)])
        let ids = try await store.submit([
            limited("a"), limited("b"), limited("a"), limited("b", priority: 5), limited("c"),
        ]).map(\.id)
        let claimed = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: flow)
        // b's priority-5 job goes first; a's first job; c's.
        #expect(claimed.map(\.job.id) == [ids[3], ids[0], ids[4]])
        try await store.finish(JobFinish(lease: claimed[1].lease, outcome: .fulfilled(nil)))
        try await store.finish(JobFinish(lease: claimed[0].lease, outcome: .fulfilled(nil)))
        let next = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(next.map(\.job.id) == [ids[1], ids[2]])
    }

    /// Six hosts (stores of their own on one schema) claiming at once,
    /// again and again, never take more than a global limit of 3 between
    /// them: the claims of a limited pool are serialized.
    @Test func concurrentClaimsOnPostgreSQLDoNotOvershootAGlobalLimit() async throws {
        let configuration = try await postgresConfiguration()
        let scope = StoreScope(postgres: configuration)
        var hosts: [PostgresJobStore] = []
        for _ in 0..<6 { hosts.append(scope.running(try await PostgresJobStore(configuration))) }
        _ = try await hosts[0].submit((0..<60).map { _ in limited("") })
        let flow = ClaimFlow(limits: ["limited": ConcurrencyLimit(global: 3)])
        let taken = try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, host) in hosts.enumerated() {
                group.addTask {
                    var count = 0
                    for _ in 0..<10 {
                        count += try await host.claim(
                            pool: "default", owner: "host-\(index)", limit: 3, leaseDuration: .seconds(30),
                            flow: flow
                        ).count
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(taken == 3)
        #expect(try await hosts[0].count("SELECT count(*) FROM jobs WHERE state = 'running'") == 3)
    }

    /// A slot is a running job under a live lease: a dead host's job stops
    /// holding one when its lease expires, before anything requeues it.
    @Test(arguments: StoreKind.allCases)
    func anExpiredLeaseFreesItsSlot(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let flow = ClaimFlow(limits: ["limited": ConcurrencyLimit(global: 1)])
        let ids = try await store.submit([limited(""), limited("")]).map(\.id)
        let dead = try await store.claim(
            pool: "default", owner: "dead", limit: 10, leaseDuration: .milliseconds(1), flow: flow)
        #expect(dead.map(\.job.id) == [ids[0]])
        try await Task.sleep(for: .milliseconds(20))
        let alive = try await store.claim(
            pool: "default", owner: "alive", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(alive.map(\.job.id) == [ids[1]])
        #expect(try await store.job(ids[0])?.job.state == .running, "not requeued yet: only its slot is free")
    }

    /// `order: fair`: each key's first job, then each key's second, so a
    /// key with many jobs queued first does not hold back a later key.
    @Test(arguments: StoreKind.allCases)
    func fairOrderTakesTurnsAcrossKeys(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let ids = try await store.submit([
            limited("big"), limited("big"), limited("big"), limited("small"), limited("small"),
        ]).map(\.id)
        let fifo = ClaimFlow(limits: ["limited": ConcurrencyLimit(global: 3)])
        let fair = ClaimFlow(limits: ["limited": ConcurrencyLimit(global: 3, order: .fair)])
        let claimed = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: fair)
        #expect(claimed.map(\.job.id) == [ids[0], ids[3], ids[1]])
        for job in claimed { try await store.finish(JobFinish(lease: job.lease, outcome: .fulfilled(nil))) }
        let rest = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: fifo)
        #expect(rest.map(\.job.id) == [ids[2], ids[4]])
    }

    /// Behind more held-back jobs than a page of the walk, a free job is still found.
    @Test(arguments: StoreKind.allCases)
    func heldBackJobsBeyondAPageDoNotHideTheRest(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let flow = ClaimFlow(limits: ["limited": ConcurrencyLimit(global: 1)])
        let held = try await store.submit((0..<300).map { _ in limited("", priority: 1) }).map(\.id)
        let free = try await store.submit([job("free")]).map(\.id)
        let claimed = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(claimed.map(\.job.id) == [held[0]] + free)
    }

    @Test func theGateCountsRunningJobsAndEachJobItAdmits() {
        let flow = ClaimFlow(limits: ["d": ConcurrencyLimit(global: 3, perKey: 2), "none": ConcurrencyLimit()])
        #expect(flow.limits.keys.sorted() == ["d"], "a limit without slots is no limit")
        var gate = FlowGate(flow: flow, running: ["d": 1])
        let page = [("d", "x"), ("d", "y"), ("d", "x"), ("other", "")].map { FlowGate.Slot(definition: $0, key: $1) }
        #expect(gate.uncounted(page) == [page[0], page[1]], "each key under a per-key limit, once")
        gate.count([page[0]: 1, page[1]: 0])
        #expect(gate.uncounted(page).isEmpty)
        let admitted = [("d", "x"), ("d", "x"), ("d", "y"), ("d", "z"), ("other", "")].map { job in
            gate.admit(definition: job.0, key: job.1)
        }
        // x holds 2 after the first; d holds 3 after y; `other` is not limited.
        #expect(admitted == [true, false, true, false, true])
    }
}
