import Foundation
import JobConfig
@testable import JobEngine
import JobMetrics
@_spi(Maintenance) import JobStore
import Logging
import TestSupport
import Testing

/// The firing logic of schedules with an injected clock (issue 20): what
/// fires when, after downtime, with overlaps, and with several jobds.
@Suite struct ScheduleFirerTests {
    /// A minute boundary: occurrences of `every: 1m` fall on t0 + k·60 s.
    static let t0 = Date(timeIntervalSince1970: 1_900_000_020)

    func definition(_ schedule: String) throws -> JobDefinition {
        let folder = try makeTemporaryFolder()
        return try DefinitionLoader().parse(yaml: """
            name: report
            schedule:
            \(schedule.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            pipeline:
              - then: work
                run: [cat]
            """, path: folder + "/report.yaml").get()
    }

    func store() throws -> SQLiteJobStore {
        try SQLiteJobStore(JobStoreConfiguration(path: try makeTemporaryFolder() + "/jobd.sqlite", checkpointInterval: nil))
    }

    func firer(_ store: any JobStore, startedAt: Date, logs: LogLines = LogLines()) -> ScheduleFirer {
        let logger = logs.logger
        return ScheduleFirer(
            store: store, hostZone: TimeZone(identifier: "UTC")!, metrics: .disabled,
            log: { level, message in logger.log(level: level, "\(message)") }, startedAt: startedAt)
    }

    func scheduled(_ store: SQLiteJobStore) async throws -> [Date] {
        try await store.list(JobQuery(limit: 1000)).jobs.compactMap(\.scheduledFor).sorted()
    }

    @Test func aNewScheduleFiresFromItsFirstTickOn() async throws {
        let store = try store()
        let report = try definition("every: 1m")
        let firer = firer(store, startedAt: Self.t0)
        let first = try await firer.tick(at: Self.t0 + 30, definitions: [report])
        #expect(first.fired.isEmpty, "nothing before the schedule existed fires")
        #expect(first.next == Self.t0 + 60)
        let second = try await firer.tick(at: Self.t0 + 61, definitions: [report])
        #expect(second.fired.count == 1)
        #expect(try await scheduled(store) == [Self.t0 + 60])
        // Ticking again finds nothing new.
        #expect(try await firer.tick(at: Self.t0 + 62, definitions: [report]).fired.isEmpty)
        try await store.close()
    }

    @Test func twoJobdsFireEachOccurrenceOnce() async throws {
        let store = try store()
        let other = try SQLiteJobStore(JobStoreConfiguration(path: store.configuration.path, checkpointInterval: nil))
        let report = try definition("every: 1m\noverlap: allow")
        let one = firer(store, startedAt: Self.t0)
        let two = firer(other, startedAt: Self.t0)
        _ = try await one.tick(at: Self.t0, definitions: [report])
        for minute in 1...10 {
            let now = Self.t0 + Double(minute * 60) + 0.5
            async let a = one.tick(at: now, definitions: [report])
            async let b = two.tick(at: now, definitions: [report])
            let fired = try await a.fired.count + b.fired.count
            #expect(fired == 1, "minute \(minute)")
        }
        #expect(try await scheduled(store) == (1...10).map { Self.t0 + Double($0 * 60) })
        try await other.close()
        try await store.close()
    }

    /// jobd stopped at t0 (mark t0) and started again ten minutes later.
    @Test(arguments: [("none", 0), ("latest", 1), ("all", 10)])
    func afterDowntimeCatchUpDecides(policy: String, missedFired: Int) async throws {
        let store = try store()
        let report = try definition("every: 1m\ncatch-up: \(policy)\noverlap: allow")
        _ = try await store.startSchedule(definition: "report", schedule: report.schedules[0].key, at: Self.t0)
        let restart = Self.t0 + 600 + 5
        let firer = firer(store, startedAt: restart)
        let tick = try await firer.tick(at: restart, definitions: [report])
        #expect(tick.fired.count == missedFired)
        let times = try await scheduled(store)
        #expect(times == Array((1...10).map { Self.t0 + Double($0 * 60) }.suffix(missedFired)))
        // On time from then on, whatever the policy.
        let later = try await firer.tick(at: Self.t0 + 660 + 1, definitions: [report])
        #expect(later.fired.count == 1)
        #expect(try await scheduled(store).last == Self.t0 + 660)
        try await store.close()
    }

    @Test func catchUpAllIsCapped() async throws {
        let store = try store()
        let logs = LogLines()
        let report = try definition("every: 1m\ncatch-up: all\noverlap: allow")
        _ = try await store.startSchedule(definition: "report", schedule: report.schedules[0].key, at: Self.t0)
        let restart = Self.t0 + 200 * 60
        let tick = try await firer(store, startedAt: restart, logs: logs).tick(at: restart, definitions: [report])
        #expect(tick.fired.count == ScheduleDefinition.maxCatchUp)
        #expect(try await scheduled(store).first == Self.t0 + Double((200 - 99) * 60), "the latest 100")
        #expect(logs.all.contains { $0.contains("more than 100 occurrences fell while no jobd ran") })
        try await store.close()
    }

    @Test func overlapSkipSkipsWhileThePreviousRunsAndSaysSo() async throws {
        let store = try store()
        let report = try definition("every: 1m\noverlap: skip")
        let firer = firer(store, startedAt: Self.t0)
        _ = try await firer.tick(at: Self.t0, definitions: [report])
        let first = try await firer.tick(at: Self.t0 + 61, definitions: [report])
        let running = try #require(first.fired.first)
        let second = try await firer.tick(at: Self.t0 + 121, definitions: [report])
        #expect(second.fired.isEmpty && second.skipped == 1)
        #expect(try await store.events(of: running).map(\.kind) == ["schedule-skipped"])
        #expect(try await scheduled(store) == [Self.t0 + 60])
        try await store.close()
    }

    @Test func overlapQueueWaitsForThePreviousToEnd() async throws {
        let store = try store()
        let report = try definition("every: 1m\noverlap: queue")
        let firer = firer(store, startedAt: Self.t0)
        _ = try await firer.tick(at: Self.t0, definitions: [report])
        let first = try #require(try await firer.tick(at: Self.t0 + 61, definitions: [report]).fired.first)
        let held = try await firer.tick(at: Self.t0 + 121, definitions: [report])
        #expect(held.deferred && held.fired.isEmpty)
        try await store.executeInWriteTransaction("UPDATE jobs SET state = 'fulfilled' WHERE id = \(first)")
        let released = try await firer.tick(at: Self.t0 + 122, definitions: [report])
        #expect(released.fired.count == 1)
        #expect(try await scheduled(store) == [Self.t0 + 60, Self.t0 + 120])
        try await store.close()
    }

    @Test func jitterDelaysTheRunNotTheOccurrence() async throws {
        let store = try store()
        let report = try definition("every: 1m\njitter: 30s\ninput: hello")
        let firer = firer(store, startedAt: Self.t0)
        _ = try await firer.tick(at: Self.t0, definitions: [report])
        let id = try #require(try await firer.tick(at: Self.t0 + 61, definitions: [report]).fired.first)
        let job = try #require(try await store.job(id)).job
        let offset = report.schedules[0].jitterOffset(definition: "report", occurrence: Self.t0 + 60)
        #expect(job.scheduledFor == Self.t0 + 60)
        #expect(abs(job.runAt.timeIntervalSince(Self.t0 + 60) - offset.timeInterval) < 0.002)
        #expect(job.input == Data("hello".utf8))
        try await store.close()
    }

    @Test func anEditedExpressionIsANewScheduleStartingNow() async throws {
        let store = try store()
        let firer = firer(store, startedAt: Self.t0)
        _ = try await firer.tick(at: Self.t0, definitions: [try definition("every: 1m")])
        // Edited to every 2m at t0 + 10 min: no catch-up of the new expression's past.
        let edited = try definition("every: 2m")
        #expect(try await firer.tick(at: Self.t0 + 600, definitions: [edited]).fired.isEmpty)
        #expect(try await firer.tick(at: Self.t0 + 721, definitions: [edited]).fired.count == 1)
        try await store.close()
    }
}
