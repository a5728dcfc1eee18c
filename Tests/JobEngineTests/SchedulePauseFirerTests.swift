import Foundation
import JobConfig
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import Testing

@testable import JobEngine

/// A paused schedule, as the firer sees it with an injected clock: it
/// fires nothing while the pause holds, and once the pause ends the
/// occurrences it held back get the catch-up the resume gave, else the
/// schedule's.
@Suite struct SchedulePauseFirerTests {
    let support = ScheduleFirerTests()
    static let t0 = ScheduleFirerTests.t0

    func pause(_ store: SQLiteJobStore, until: Date) async throws {
        _ = try await store.pause(Pause(scope: .schedule, name: "report", actor: "test", until: until))
    }

    /// Paused from t0 for ten minutes (the pause expires on its own):
    /// nothing fires at the occurrences in between; at its end the ten it
    /// held back get the schedule's catch-up, and the schedule fires on time
    /// after.
    @Test(arguments: [("none", 0), ("latest", 1), ("all", 10)])
    func aPausedScheduleFiresNothingAndCatchesUpWhenItEnds(policy: String, caughtUp: Int) async throws {
        let store = try support.store()
        let report = try support.definition("every: 1m\ncatch-up: \(policy)\noverlap: allow")
        let firer = support.firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        try await pause(store, until: Self.t0 + 630)
        for minute in 1...10 {
            let tick = await firer.tick(at: Self.t0 + Double(minute * 60) + 0.5, definitions: [report])
            #expect(tick.fired.isEmpty, "minute \(minute): paused")
            #expect(tick.next.map { $0 <= Self.t0 + 630 } == true, "it looks again by the pause's end")
        }
        #expect(try await support.scheduled(store).isEmpty)
        // A jobd started meanwhile (a restart) reads the pause from the database too.
        let restarted = support.firer(store)
        #expect(await restarted.tick(at: Self.t0 + 620.5, definitions: [report]).fired.isEmpty)
        let ended = await firer.tick(at: Self.t0 + 630, definitions: [report])
        // catch-up: none leaves an occurrence that just passed for a few seconds.
        if policy == "none" { _ = await firer.tick(at: Self.t0 + 640, definitions: [report]) }
        #expect(ended.fired.count == caughtUp)
        #expect(
            try await support.scheduled(store)
                == Array((1...10).map { Self.t0 + Double($0 * 60) }.suffix(caughtUp)))
        let onTime = await firer.tick(at: Self.t0 + 660.5, definitions: [report])
        #expect(onTime.fired.count == 1)
        #expect(try await support.scheduled(store).last == Self.t0 + 660)
        try await store.close()
    }

    /// The catch-up a resume gives (`resume schedule --catch-up all`) wins
    /// over the schedule's (`none`), for that pause only.
    @Test func theResumesCatchUpWinsOverTheSchedules() async throws {
        let store = try support.store()
        let report = try support.definition("every: 1m\ncatch-up: none\noverlap: allow")
        let firer = support.firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        try await pause(store, until: Self.t0 + 3600)
        #expect(await firer.tick(at: Self.t0 + 300.5, definitions: [report]).fired.isEmpty)
        // What a resume writes, at t0 + 5 min (the store's resume uses the database's clock).
        try await store.executeInWriteTransaction(
            "UPDATE pauses SET until = '\(Timestamp.text(Self.t0 + 300.5))', catch_up = 'all' WHERE scope = 'schedule'")
        let resumed = await firer.tick(at: Self.t0 + 301, definitions: [report])
        #expect(resumed.fired.count == 5)
        // A later downtime gets the schedule's own catch-up again: none.
        let restarted = support.firer(store)
        _ = await restarted.tick(at: Self.t0 + 900, definitions: [report])
        _ = await restarted.tick(at: Self.t0 + 910, definitions: [report])
        #expect(try await support.scheduled(store).count == 5)
        try await store.close()
    }
}
