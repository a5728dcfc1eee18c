import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// The claim under rates (``StartRate``), on both stores.
@Suite struct RateClaimTests {
    func rated(_ key: String = "", priority: Int = 0) -> NewJob {
        var new = job("rated", priority: priority)
        new.limitKey = key
        return new
    }

    /// `2/1m`: two starts, then none (the jobs behind the rated ones are
    /// claimed), whatever ends, until the first starts leave the window —
    /// here moved into the past by hand, as a minute passing would; then
    /// two again. The store says when the slot opens.
    @Test(arguments: StoreKind.allCases)
    func aRateRefusesTheStartAfterNInAWindowAndAllowsItAfter(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let rate = StartRate(count: 2, window: .seconds(60))
        let flow = ClaimFlow(rates: ["rated": rate])
        let ids = try await store.submit((0..<5).map { _ in rated() }).map(\.id)
        let free = try await store.submit([job("free")]).map(\.id)
        let before = Date()
        let first = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(first.map(\.job.id) == [ids[0], ids[1]] + free)
        // Ending the jobs frees no start: another host is refused too.
        for job in first { try await store.finish(JobFinish(lease: job.lease, outcome: .fulfilled(nil))) }
        #expect(
            try await store.claim(pool: "default", owner: "b", limit: 10, leaseDuration: .seconds(30), flow: flow)
                .isEmpty)
        let opens = try #require(try await store.nextRateSlot(forJob: ids[2], rate: rate))
        #expect(opens >= before.addingTimeInterval(59.9) && opens <= Date().addingTimeInterval(60.1))
        #expect(try await store.nextRateSlot(pool: "default", flow: flow) == opens)

        try await store.executeInWriteTransaction(
            kind == .sqlite
                ? "UPDATE rate_starts SET frees_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 seconds')"
                : "UPDATE rate_starts SET frees_at = now() - interval '1 second'")
        #expect(try await store.nextRateSlot(forJob: ids[2], rate: rate) == nil, "a slot is free")
        let second = try await store.claim(
            pool: "default", owner: "b", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(second.map(\.job.id) == [ids[2], ids[3]])
        #expect(try await store.nextRateSlot(forJob: ids[4], rate: rate) != nil)
        #expect(try await store.count("SELECT count(*) FROM rate_starts") == 2, "the freed starts were deleted")
    }

    /// `rate-key`: each key has its own starts; a key without a free slot
    /// holds back only its own jobs.
    @Test(arguments: StoreKind.allCases)
    func perKeyRatesAreIndependent(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let rate = StartRate(count: 1, window: .seconds(60), perKey: true)
        let flow = ClaimFlow(rates: ["rated": rate])
        let ids = try await store.submit([rated("a"), rated("a"), rated("b"), rated("c")]).map(\.id)
        let claimed = try await store.claim(
            pool: "default", owner: "a", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(claimed.map(\.job.id) == [ids[0], ids[2], ids[3]])
        #expect(try await store.nextRateSlot(forJob: ids[1], rate: rate) != nil, "a's slot is taken")
        let more = try await store.submit([rated("d"), rated("a")]).map(\.id)
        let next = try await store.claim(
            pool: "default", owner: "b", limit: 10, leaseDuration: .seconds(30), flow: flow)
        #expect(next.map(\.job.id) == [more[0]], "d starts; a waits")
        // Without rate-key the definition has one rate: one start in all.
        let whole = ClaimFlow(rates: ["rated": StartRate(count: 1, window: .seconds(60))])
        #expect(
            try await store.claim(pool: "default", owner: "b", limit: 10, leaseDuration: .seconds(30), flow: whole)
                .map(\.job.id) == [ids[1]])
    }

    /// Six hosts claiming at once, again and again, never start more than a
    /// rate of 3 between them: the rated claims of a pool are serialized.
    @Test func concurrentClaimsOnPostgreSQLDoNotOvershootARate() async throws {
        let configuration = try await postgresConfiguration()
        let scope = StoreScope(postgres: configuration)
        var hosts: [PostgresJobStore] = []
        for _ in 0..<6 { hosts.append(scope.running(try await PostgresJobStore(configuration))) }
        _ = try await hosts[0].submit((0..<30).map { _ in rated() })
        let flow = ClaimFlow(rates: ["rated": StartRate(count: 3, window: .seconds(60))])
        let taken = try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, host) in hosts.enumerated() {
                group.addTask {
                    var count = 0
                    for _ in 0..<5 {
                        let claimed = try await host.claim(
                            pool: "default", owner: "host-\(index)", limit: 3, leaseDuration: .seconds(30),
                            flow: flow)
                        for job in claimed {
                            try await host.finish(JobFinish(lease: job.lease, outcome: .fulfilled(nil)))
                        }
                        count += claimed.count
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(taken == 3)
    }

    @Test func theGateCountsStartsPerRateKey() {
        let flow = ClaimFlow(rates: [
            "keyed": StartRate(count: 1, window: .seconds(1), perKey: true),
            "whole": StartRate(count: 2, window: .seconds(1)),
        ])
        var gate = FlowGate(flow: flow, running: [:])
        let page = [("keyed", "x"), ("keyed", "y"), ("whole", "x"), ("whole", "y"), ("other", "")].map {
            FlowGate.Slot(definition: $0, key: $1)
        }
        #expect(
            gate.uncountedRates(page) == [page[0], page[1], FlowGate.Slot(definition: "whole", key: "")],
            "each rate key once; a rate without rate-key counts under ''")
        gate.countStarts([page[0]: 1, page[1]: 0, FlowGate.Slot(definition: "whole", key: ""): 1])
        let admitted = page.map { gate.admit(definition: $0.definition, key: $0.key) }
        #expect(admitted == [false, true, true, false, true])
    }
}
