import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Why a pending job waits (``JobReadStore/waitReasons(of:rules:)``), each
/// reason made by a real state of the store, on both stores; and the
/// counts by reason (``JobReadStore/waitingJobCounts(rules:)``) of the
/// same states.
@Suite struct WaitReasonTests {
    static let rules = WaitRules(
        poolSizes: ["default": 2, "kids": 4],
        flows: ["default": ClaimFlow(limits: ["keyed": ConcurrencyLimit(perKey: 1)])])

    static func keyed(_ key: String) -> NewJob {
        var new = job("keyed")
        new.limitKey = key
        return new
    }

    static func claim(
        _ store: some StoreUnderTest, pool: String = "default", limit: Int = 10, rules: WaitRules = rules
    ) async throws
        -> [ClaimedJob]
    {
        // Leases far longer than the test: the reasons count live leases, and
        // under ThreadSanitizer on a busy machine two steps can be 30 s apart.
        try await store.claim(
            pool: pool, owner: "web-1/7/x", limit: limit, leaseDuration: .seconds(600),
            flow: rules.flows[pool] ?? .unlimited)
    }

    /// A delayed job, a paused definition, a job after another, a parent
    /// waiting for its children, a full key, a job waiting for its turn in
    /// its key, a pool not configured, a job ready: each says so, in one
    /// read of the page; a job not pending has no reason. The two children
    /// are ready in their pool.
    @Test(arguments: StoreKind.allCases)
    func eachStateGivesItsReason(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        // A parent claimed, then waiting for two children (pool `kids`).
        let parentID = try await store.submit(job("parent", stages: ChildJoinTests.plan)).id
        let parent = try #require(try await Self.claim(store, limit: 1).first)
        #expect(try await ChildJoinTests.join(store, parent, ["a", "b"]) == .waiting(children: 2))
        // Key "acme": one running, one pending behind it; key "zeta": two pending.
        let acme = try await store.submit([Self.keyed("acme"), Self.keyed("acme")]).map(\.id)
        #expect(try await Self.claim(store, limit: 1).map(\.job.id) == [acme[0]])
        let zeta = try await store.submit([Self.keyed("zeta"), Self.keyed("zeta")]).map(\.id)
        let later = Date().addingTimeInterval(3600)
        let delayed = try await store.submit(job("report", runAt: later)).id
        let paused = try await store.submit(job("quiet")).id
        _ = try await store.pause(
            Pause(scope: .definition, name: "quiet", reason: "disk full", actor: "ops@web-1"))
        var afterJob = job("report")
        afterJob.after = [delayed]
        let after = try await store.submit(afterJob).id
        let elsewhere = try await store.submit(job("report", pool: "nightly")).id
        let ready = try await store.submit(job("report")).id

        let ids = [parentID, acme[0], acme[1], zeta[0], zeta[1], delayed, paused, after, elsewhere, ready]
        let reasons = try await store.waitReasons(of: ids + [999_999], rules: Self.rules)
        #expect(reasons[parentID] == .children(stage: 0, left: 2))
        #expect(reasons[acme[0]] == nil)
        #expect(reasons[acme[1]] == .keyLimitFull(key: "acme", running: 1, limit: 1))
        #expect(reasons[zeta[0]] == .ready)
        #expect(reasons[zeta[1]] == .turnInKey(key: "zeta", ahead: zeta[0]))
        #expect(reasons[delayed]?.code == .delayed)
        if case .delayed(let until) = reasons[delayed] { #expect(abs(until.timeIntervalSince(later)) < 0.01) }
        guard case .paused(let pause) = reasons[paused] else {
            Issue.record("job \(paused) is not said to be paused: \(String(describing: reasons[paused]))")
            return
        }
        #expect(pause.scope == .definition && pause.actor == "ops@web-1" && pause.reason == "disk full")
        #expect(reasons[after] == .after(jobs: [delayed]))
        #expect(reasons[elsewhere] == .poolNotConfigured(pool: "nightly"))
        #expect(reasons[ready] == .ready)
        #expect(reasons[999_999] == nil)

        let counts = try await store.waitingJobCounts(rules: Self.rules)
        #expect(
            counts == [
                .children: 1, .keyLimit: 1, .turn: 1, .delayed: 1, .paused: 1, .after: 1, .noPool: 1, .ready: 4,
            ])
    }

    /// A definition's global limit full, then the pool full on the one
    /// host that runs it (its size, 2).
    @Test(arguments: StoreKind.allCases)
    func fullLimitsAndAFullPoolSaySo(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let rules = WaitRules(
            poolSizes: ["default": 2], flows: ["default": ClaimFlow(limits: ["capped": ConcurrencyLimit(global: 1)])])
        var capped = [job("capped"), job("capped")]
        for index in capped.indices { capped[index].limitKey = "" }
        let ids = try await store.submit(capped).map(\.id)
        _ = try await store.claim(
            pool: "default", owner: "web-1/7/x", limit: 1, leaseDuration: .seconds(600),
            flow: rules.flows["default"]!)
        #expect(
            try await store.waitReason(of: ids[1], rules: rules)
                == .limitFull(.definition("capped"), running: 1, limit: 1))
        // Ahead of the second capped job in the claim's order.
        let other = try await store.submit([job("report", priority: 1), job("report", priority: 1)]).map(\.id)
        _ = try await store.claim(
            pool: "default", owner: "web-1/7/x", limit: 1, leaseDuration: .seconds(600), flow: .unlimited)
        #expect(
            try await store.waitReason(of: other[1], rules: rules)
                == .poolFull(
                    pool: "default", size: 2, hosts: [WaitReason.HostLoad(owner: "web-1/7/x", running: 2)]))
        #expect(try await store.waitingJobCounts(rules: rules) == [.limit: 1, .poolFull: 1])
    }

    /// A rated definition whose window is used up: its ready jobs wait for
    /// the rate, until the slot the store knows; a definition without a
    /// rate stays ready.
    @Test(arguments: StoreKind.allCases)
    func aUsedUpRateSaysWhenTheNextSlotOpens(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let rate = StartRate(count: 1, window: .seconds(60))
        let rules = WaitRules(poolSizes: ["default": 8], flows: ["default": ClaimFlow(rates: ["rated": rate])])
        let ids = try await store.submit([job("rated"), job("rated"), job("rated"), job("free")]).map(\.id)
        #expect(try await store.waitReason(of: ids[1], rules: rules) == .ready)
        let taken = try await store.claim(
            pool: "default", owner: "web-1/7/x", limit: 1, leaseDuration: .seconds(30),
            flow: rules.flows["default"]!)
        #expect(taken.map(\.job.id) == [ids[0]])
        let opens = try #require(try await store.nextRateSlot(forJob: ids[1], rate: rate))
        let reasons = try await store.waitReasons(of: Array(ids.dropFirst()), rules: rules)
        #expect(reasons[ids[1]] == .rateLimited(nextSlot: opens) && reasons[ids[2]] == .rateLimited(nextSlot: opens))
        #expect(reasons[ids[3]] == .ready)
    }

    /// The counts by reason say of rated jobs what each job's reason says:
    /// a definition's used-up rate counts its ready jobs as `rate`; with a
    /// rate per key, only the jobs of the keys whose rate is used up.
    @Test(arguments: StoreKind.allCases)
    func usedUpRatesAreCountedAsRate(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let rules = WaitRules(
            poolSizes: ["default": 8],
            flows: [
                "default": ClaimFlow(rates: [
                    "rated": StartRate(count: 1, window: .seconds(60)),
                    "keyed": StartRate(count: 1, window: .seconds(60), perKey: true),
                ])
            ])
        _ = try await store.submit([job("rated"), job("rated"), job("rated"), Self.keyed("a"), Self.keyed("a")])
        _ = try await Self.claim(store, limit: 8, rules: rules)
        let ids = try await store.submit([Self.keyed("b"), job("free")]).map(\.id)
        let pending = try await store.queryStrings("SELECT id FROM jobs WHERE state = 'pending'").compactMap {
            $0.flatMap { Int64($0) }
        }
        let reasons = try await store.waitReasons(of: pending, rules: rules)
        #expect(reasons[ids[0]] == .ready && reasons[ids[1]] == .ready)
        let byCode = Dictionary(reasons.values.map { ($0.code, 1) }, uniquingKeysWith: +)
        #expect(byCode == [.rate: 3, .ready: 2])
        #expect(try await store.waitingJobCounts(rules: rules) == byCode)
    }
}
