import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// Schedule marks: each occurrence fired or skipped exactly once, however
/// many processes try, on both stores.
@Suite struct ScheduleMarkTests {
    static let t0 = Date(timeIntervalSince1970: 1_900_000_000)

    func occurrence(
        _ at: Date, _ overlap: ScheduleOccurrence.Overlap = .allow, schedule: String = "every: 1m"
    ) -> ScheduleOccurrence {
        var new = job("report", input: "scheduled")
        new.scheduledFor = at
        return ScheduleOccurrence(definition: "report", schedule: schedule, at: at, job: new, overlap: overlap)
    }

    @Test(arguments: StoreKind.allCases)
    func aScheduleStartsOnceAndItsMarkIsKept(kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        #expect(try await store.startSchedule(definition: "report", schedule: "every: 1m", at: Self.t0) == Self.t0)
        // A second start (another jobd) keeps the first mark.
        #expect(
            try await store.startSchedule(definition: "report", schedule: "every: 1m", at: Self.t0 + 600) == Self.t0)
        #expect(
            try await store.scheduleMarks() == [
                ScheduleMark(definition: "report", schedule: "every: 1m", firedThrough: Self.t0)
            ])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func eachOccurrenceFiresOnceHoweverManyTry(kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        let other = try await scope.openAnother()
        _ = try await store.startSchedule(definition: "report", schedule: "every: 1m", at: Self.t0)
        var outcomes: [OccurrenceOutcome] = []
        for minute in 1...5 {
            let at = Self.t0 + Double(minute * 60)
            async let first = store.fireOccurrence(occurrence(at))
            async let second = other.fireOccurrence(occurrence(at))
            outcomes += [try await first, try await second]
        }
        #expect(outcomes.filter { if case .fired = $0 { true } else { false } }.count == 5, "\(outcomes)")
        #expect(outcomes.filter { $0 == .alreadyDone }.count == 5, "\(outcomes)")
        #expect(try await store.count("SELECT count(*) FROM jobs WHERE scheduled_for IS NOT NULL") == 5)
        // An occurrence at or before the mark is never fired again.
        #expect(try await store.fireOccurrence(occurrence(Self.t0 + 180)) == .alreadyDone)
        #expect(try await store.scheduleMarks().first?.firedThrough == Self.t0 + 300)
        #expect(try await store.latestScheduledJobs()["report"]?.scheduledFor == Self.t0 + 300)
        try await other.close()
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func overlapSkipRecordsAnEventAndQueueWaits(kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        _ = try await store.startSchedule(definition: "report", schedule: "every: 1m", at: Self.t0)
        guard case let .fired(first) = try await store.fireOccurrence(occurrence(Self.t0 + 60, .skip)) else {
            Issue.record("the first occurrence did not fire")
            return
        }
        // The first job has not ended: `skip` skips with an event on it.
        #expect(try await store.fireOccurrence(occurrence(Self.t0 + 120, .skip)) == .skipped(running: first))
        let events = try await store.events(of: first)
        #expect(events.map(\.kind) == ["schedule-skipped"])
        #expect(events.first?.message.contains("was skipped because this job had not ended") == true)
        // `queue` holds the occurrence back, without moving the mark.
        #expect(try await store.fireOccurrence(occurrence(Self.t0 + 180, .queue)) == .deferred)
        #expect(try await store.scheduleMarks().first?.firedThrough == Self.t0 + 120)
        // Once the job ended, the held occurrence fires.
        try await store.executeInWriteTransaction("UPDATE jobs SET state = 'fulfilled' WHERE id = \(first)")
        guard case .fired = try await store.fireOccurrence(occurrence(Self.t0 + 180, .queue)) else {
            Issue.record("the queued occurrence did not fire once the job ended")
            return
        }
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func skippingMovesTheMarkOnce(kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        _ = try await store.startSchedule(definition: "report", schedule: "cron: 0 * * * *", at: Self.t0)
        #expect(
            try await store.skipOccurrences(definition: "report", schedule: "cron: 0 * * * *", through: Self.t0 + 7200))
        #expect(
            try await !store.skipOccurrences(definition: "report", schedule: "cron: 0 * * * *", through: Self.t0 + 3600)
        )
        #expect(try await store.scheduleMarks().first?.firedThrough == Self.t0 + 7200)
        #expect(try await store.fireOccurrence(occurrence(Self.t0 + 3600, schedule: "cron: 0 * * * *")) == .alreadyDone)
        try await store.close()
    }

    /// Two schedules of one definition on one instant: the second makes no
    /// job ((definition, scheduled_for) is unique), and says so on the first's.
    @Test(arguments: StoreKind.allCases)
    func aCoincidingScheduleIsRecordedOnTheJobOfTheInstant(kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        for schedule in ["every: 1m", "every: 2m"] {
            _ = try await store.startSchedule(definition: "report", schedule: schedule, at: Self.t0)
        }
        guard case let .fired(job) = try await store.fireOccurrence(occurrence(Self.t0 + 120)) else {
            Issue.record("the first schedule's occurrence did not fire")
            return
        }
        #expect(
            try await store.fireOccurrence(occurrence(Self.t0 + 120, schedule: "every: 2m")) == .coincided(job: job))
        let events = try await store.events(of: job)
        #expect(events.map(\.kind) == ["schedule-skipped"])
        #expect(events.first?.message.contains("schedule every: 2m of report") == true, "\(events)")
        #expect(events.first?.message.contains("is for the same instant") == true, "\(events)")
        // The mark moved: the occurrence is done, and a second call says so.
        #expect(try await store.fireOccurrence(occurrence(Self.t0 + 120, schedule: "every: 2m")) == .alreadyDone)
        #expect(try await store.count("SELECT count(*) FROM jobs") == 1)
        try await store.close()
    }
}
