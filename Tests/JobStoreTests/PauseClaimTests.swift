import Foundation
import JobValues
import Synchronization
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// The claim under pauses (``Pause``), on both stores.
@Suite struct PauseClaimTests {
    func claim(
        _ store: any StoreUnderTest, pool: String = "default", flow: ClaimFlow = .unlimited
    ) async throws -> [Int64] {
        try await store.claim(pool: pool, owner: "a", limit: 10, leaseDuration: .seconds(30), flow: flow)
            .map(\.job.id)
    }

    /// A paused pool gives nothing to claim; the other pools go on; a
    /// running job keeps its lease; resuming gives the jobs back.
    @Test(arguments: StoreKind.allCases)
    func aPausedPoolIsNotClaimedUntilResumed(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let running = try await store.submit(job("report"))
        let held = try await store.claim(pool: "default", owner: "a", limit: 1, leaseDuration: .seconds(30))
        #expect(held.map(\.job.id) == [running.id])
        let ids = try await store.submit([job("report"), job("report")]).map(\.id)
        let other = try await store.submit(job("report", pool: "other")).id
        let made = try await store.pause(Pause(scope: .pool, name: "default", reason: "disk full", actor: "ops@h"))
        #expect(made.reason == "disk full" && made.until == nil)
        #expect(try await store.pauses().map(\.name) == ["default"])
        #expect(try await claim(store).isEmpty)
        #expect(try await claim(store, flow: ClaimFlow(pool: 5)).isEmpty)
        #expect(try await claim(store, pool: "other") == [other])
        #expect(try await store.renew(held.map(\.lease), leaseDuration: .seconds(30)).lost.isEmpty)
        let resumed = try await store.resume(.pool, name: "default")
        #expect(resumed?.actor == "ops@h")
        #expect(try await store.pauses().isEmpty)
        #expect(try await claim(store) == ids)
        #expect(try await store.resume(.pool, name: "default") == nil)
    }

    /// A paused definition's jobs are passed over and the jobs behind them
    /// claimed, with limits or without.
    @Test(arguments: StoreKind.allCases)
    func aPausedDefinitionIsPassedOver(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let ids = try await store.submit([job("a"), job("b"), job("a"), job("c")]).map(\.id)
        _ = try await store.pause(Pause(scope: .definition, name: "a", actor: "ops@h"))
        #expect(
            try await claim(store, flow: ClaimFlow(limits: ["c": ConcurrencyLimit(global: 5)])) == [ids[1], ids[3]])
        let more = try await store.submit([job("a"), job("d")]).map(\.id)
        #expect(try await claim(store) == [more[1]])
        _ = try await store.resume(.definition, name: "a")
        #expect(try await claim(store) == [ids[0], ids[2], more[0]])
    }

    /// A pause with `until` holds until then; past it, it no longer
    /// counts, with nothing to clean up, and is no longer listed.
    @Test(arguments: StoreKind.allCases)
    func aPauseUntilATimeExpiresOnItsOwn(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let ids = try await store.submit([job("a"), job("b")]).map(\.id)
        _ = try await store.pause(
            Pause(scope: .definition, name: "a", actor: "ops@h", until: Date().addingTimeInterval(3600)))
        _ = try await store.pause(
            Pause(scope: .definition, name: "b", actor: "ops@h", until: Date().addingTimeInterval(-1)))
        #expect(try await store.pauses().map(\.name) == ["a"])
        #expect(try await claim(store) == [ids[1]])
        // Pausing again replaces the pause, here with one already past.
        _ = try await store.pause(
            Pause(scope: .definition, name: "a", actor: "ops@h", until: Date().addingTimeInterval(-1)))
        #expect(try await store.pauses().isEmpty)
        #expect(try await claim(store) == [ids[0]])
    }

    /// The engine's timer: a paused pool or definition has no job to run
    /// until its pause ends (the engine would otherwise claim again and
    /// again, in vain), and its pause's end is when to look again.
    @Test(arguments: StoreKind.allCases)
    func nextRunAtLooksPastPausesToWhenTheyEnd(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        // Whole seconds: a stored time keeps its milliseconds exactly.
        let later = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 600).rounded(.down))
        let soon = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 300).rounded(.down))
        _ = try await store.submit([job("a"), job("b", runAt: later)])
        _ = try await store.pause(Pause(scope: .definition, name: "a", actor: "ops@h"))
        #expect(try await store.nextRunAt(pool: "default").map(Self.ms) == Self.ms(later))
        _ = try await store.pause(Pause(scope: .definition, name: "a", actor: "ops@h", until: soon))
        #expect(try await store.nextRunAt(pool: "default").map(Self.ms) == Self.ms(soon))
        _ = try await store.pause(Pause(scope: .pool, name: "default", actor: "ops@h"))
        #expect(try await store.nextRunAt(pool: "default") == nil)
        _ = try await store.pause(Pause(scope: .pool, name: "default", actor: "ops@h", until: later))
        #expect(try await store.nextRunAt(pool: "default").map(Self.ms) == Self.ms(later))
        _ = try await store.resume(.pool, name: "default")
        _ = try await store.resume(.definition, name: "a")
        let due = try #require(try await store.nextRunAt(pool: "default"))
        #expect(due <= Date())
    }

    static func ms(_ date: Date) -> Int64 { Timestamp.milliseconds(date) }

    /// On PostgreSQL a resume wakes every host's claim of the pools it
    /// frees: the pool itself, or the pools of a definition's pending jobs.
    @Test func aResumeWakesOtherHostsOnPostgres() async throws {
        let (store, scope) = try await makeStore(.postgres)
        let listening = try #require(try await scope.openAnother() as? PostgresJobStore)
        let heard = Mutex<[StoreWakeUp]>([])
        let reader = Task {
            for await wakeUp in listening.wakeUps() { heard.withLock { $0.append(wakeUp) } }
        }
        defer { reader.cancel() }
        try await waitUntil("the LISTEN connection is up") { listening.wakeUpStatus.listening }
        _ = try await store.submit(job("export", pool: "reports"))
        try await waitUntil("the submit is heard") { heard.withLock { $0.contains(.runnable(pool: "reports")) } }
        _ = try await store.pause(Pause(scope: .definition, name: "export", actor: "ops@h"))
        _ = try await store.pause(Pause(scope: .pool, name: "bulk", actor: "ops@h"))
        heard.withLock { $0 = [] }
        _ = try await store.resume(.definition, name: "export")
        try await waitUntil("the definition's resume is heard") {
            heard.withLock { $0.contains(.runnable(pool: "reports")) }
        }
        _ = try await store.resume(.pool, name: "bulk")
        try await waitUntil("the pool's resume is heard") { heard.withLock { $0.contains(.runnable(pool: "bulk")) } }
    }
}
