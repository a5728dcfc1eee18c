import Foundation
import JobConfig
import JobMetrics
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import JobValues
import Logging
import TestSupport
import Testing

@testable import JobEngine

/// The firing logic of schedules with an injected clock: what
/// fires when, after downtime, with overlaps, and with several jobds.
@Suite struct ScheduleFirerTests {
    /// A minute boundary: occurrences of `every: 1m` fall on t0 + k·60 s.
    static let t0 = Date(timeIntervalSince1970: 1_900_000_020)

    func definition(_ schedule: String, name: String = "report") throws -> JobDefinition {
        let folder = try makeTemporaryFolder()
        return try DefinitionLoader().parse(
            yaml: """
                name: \(name)
                schedule:
                \(schedule.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
                pipeline:
                  - then: work
                    run: [cat]
                """, path: folder + "/report.yaml"
        ).get()
    }

    func store(valueCap: Int = 1 << 20) throws -> SQLiteJobStore {
        try SQLiteJobStore(
            SQLiteJobStoreConfiguration(
                path: try makeTemporaryFolder() + "/jobd.sqlite", maxValueBytes: valueCap, checkpointInterval: nil))
    }

    func firer(_ store: any JobStore, logs: LogLines = LogLines()) -> ScheduleFirer {
        let logger = logs.logger
        return ScheduleFirer(
            store: store, hostZone: TimeZone(identifier: "UTC")!, metrics: .disabled,
            log: { level, message in logger.log(level: level, "\(message)") })
    }

    func scheduled(_ store: SQLiteJobStore) async throws -> [Date] {
        try await store.list(JobQuery(limit: 1000)).jobs.compactMap(\.scheduledFor).sorted()
    }

    @Test func aNewScheduleFiresFromItsFirstTickOn() async throws {
        let store = try store()
        let report = try definition("every: 1m")
        let firer = firer(store)
        let first = await firer.tick(at: Self.t0 + 30, definitions: [report])
        #expect(first.fired.isEmpty, "nothing before the schedule existed fires")
        #expect(first.next == Self.t0 + 60)
        let second = await firer.tick(at: Self.t0 + 61, definitions: [report])
        #expect(second.fired.count == 1)
        #expect(try await scheduled(store) == [Self.t0 + 60])
        // Ticking again finds nothing new.
        #expect(await firer.tick(at: Self.t0 + 62, definitions: [report]).fired.isEmpty)
        try await store.close()
    }

    @Test func twoJobdsFireEachOccurrenceOnce() async throws {
        let store = try store()
        let other = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: store.configuration.path, checkpointInterval: nil))
        let report = try definition("every: 1m\noverlap: allow")
        let one = firer(store)
        let two = firer(other)
        _ = await one.tick(at: Self.t0, definitions: [report])
        for minute in 1...10 {
            let now = Self.t0 + Double(minute * 60) + 0.5
            async let a = one.tick(at: now, definitions: [report])
            async let b = two.tick(at: now, definitions: [report])
            let fired = await a.fired.count + b.fired.count
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
        let firer = firer(store)
        let tick = await firer.tick(at: restart, definitions: [report])
        #expect(tick.fired.count == missedFired)
        let times = try await scheduled(store)
        #expect(times == Array((1...10).map { Self.t0 + Double($0 * 60) }.suffix(missedFired)))
        // On time from then on, whatever the policy.
        let later = await firer.tick(at: Self.t0 + 660 + 1, definitions: [report])
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
        let tick = await firer(store, logs: logs).tick(at: restart, definitions: [report])
        #expect(tick.fired.count == ScheduleDefinition.maxCatchUp)
        #expect(try await scheduled(store).first == Self.t0 + Double((200 - 99) * 60), "the latest 100")
        #expect(logs.all.contains { $0.contains("more than 100 occurrences fell while no jobd ran") })
        try await store.close()
    }

    /// Under `overlap: skip` the first missed occurrence's job is still
    /// pending when the next is fired: the log says how many made a job
    /// and why the others did not, rather than that all of them run.
    @Test(arguments: [("skip", 1), ("allow", 100)])
    func catchUpAllSaysWhatItFired(overlap: String, made: Int) async throws {
        let store = try store()
        let logs = LogLines()
        let report = try definition("every: 1m\ncatch-up: all\noverlap: \(overlap)")
        _ = try await store.startSchedule(definition: "report", schedule: report.schedules[0].key, at: Self.t0)
        let tick = await firer(store, logs: logs).tick(at: Self.t0 + 200 * 60, definitions: [report])
        #expect(tick.fired.count == made)
        let summary = try #require(logs.all.first { $0.contains("more than 100 occurrences fell while no jobd ran") })
        #expect(summary.contains("catch-up: all fires the latest 100: \(made) made a job"), "\(summary)")
        #expect(
            summary.contains("\(100 - made) were skipped because an earlier job of report had not ended")
                == (made < 100),
            "\(summary)")
        try await store.close()
    }

    /// A hand-written mark that is not a time is replaced by the time it
    /// was seen, and the schedule fires from there, as a new one does.
    @Test func aMarkThatIsNotATimeIsReplaced() async throws {
        let store = try store()
        let logs = LogLines()
        let report = try definition("every: 1m\ncatch-up: all\noverlap: allow")
        let key = report.schedules[0].key
        try await store.executeInWriteTransaction(
            "INSERT INTO schedule_marks (definition, schedule, fired_through) VALUES ('report', '\(key)', 'garbage')")
        let firer = firer(store, logs: logs)
        let first = await firer.tick(at: Self.t0 + 30, definitions: [report])
        #expect(first.fired.isEmpty, "nothing is caught up from a mark that is not a time")
        #expect(logs.all.contains { $0.contains("is not a time jobd wrote; replaced by now") }, "\(logs.all)")
        #expect(try await store.scheduleMarks().map(\.firedThrough) == [Self.t0 + 30])
        #expect(await firer.tick(at: Self.t0 + 61, definitions: [report]).fired.count == 1)
        #expect(try await scheduled(store) == [Self.t0 + 60])
        try await store.close()
    }

    /// A mark ahead of the clock silences the schedule until then, and the
    /// log says so, once.
    @Test func aMarkAheadOfTheClockIsSaidOnce() async throws {
        let store = try store()
        let logs = LogLines()
        let report = try definition("every: 1m")
        let ahead = Date(timeIntervalSince1970: 4_070_908_800)  // 2099-01-01
        _ = try await store.startSchedule(definition: "report", schedule: report.schedules[0].key, at: ahead)
        let firer = firer(store, logs: logs)
        for minute in 1...3 {
            #expect(await firer.tick(at: Self.t0 + Double(minute * 60) + 1, definitions: [report]).fired.isEmpty)
        }
        let said = logs.all.filter { $0.contains("fired through 2099-01-01T00:00:00Z, after now") }
        #expect(said.count == 1, "\(logs.all)")
        #expect(said.first?.contains("delete its row from schedule_marks") == true)
        try await store.close()
    }

    @Test func overlapSkipSkipsWhileThePreviousRunsAndSaysSo() async throws {
        let store = try store()
        let report = try definition("every: 1m\noverlap: skip")
        let firer = firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        let first = await firer.tick(at: Self.t0 + 61, definitions: [report])
        let running = try #require(first.fired.first)
        let second = await firer.tick(at: Self.t0 + 121, definitions: [report])
        #expect(second.fired.isEmpty && second.skipped == 1)
        #expect(try await store.events(of: running).map(\.kind) == ["schedule-skipped"])
        #expect(try await scheduled(store) == [Self.t0 + 60])
        try await store.close()
    }

    @Test func overlapQueueWaitsForThePreviousToEnd() async throws {
        let store = try store()
        let report = try definition("every: 1m\noverlap: queue")
        let firer = firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        let first = try #require(await firer.tick(at: Self.t0 + 61, definitions: [report]).fired.first)
        let held = await firer.tick(at: Self.t0 + 121, definitions: [report])
        #expect(held.deferred && held.fired.isEmpty)
        try await store.executeInWriteTransaction("UPDATE jobs SET state = 'fulfilled' WHERE id = \(first)")
        let released = await firer.tick(at: Self.t0 + 122, definitions: [report])
        #expect(released.fired.count == 1)
        #expect(try await scheduled(store) == [Self.t0 + 60, Self.t0 + 120])
        try await store.close()
    }

    @Test func jitterDelaysTheRunNotTheOccurrence() async throws {
        let store = try store()
        let report = try definition("every: 1m\njitter: 30s\ninput: hello")
        let firer = firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        let id = try #require(await firer.tick(at: Self.t0 + 61, definitions: [report]).fired.first)
        let job = try #require(try await store.job(id)).job
        let offset = report.schedules[0].jitterOffset(definition: "report", occurrence: Self.t0 + 60)
        #expect(job.scheduledFor == Self.t0 + 60)
        #expect(abs(job.runAt.timeIntervalSince(Self.t0 + 60) - offset.timeInterval) < 0.002)
        #expect(job.input == Data("hello".utf8))
        try await store.close()
    }

    @Test func anEditedExpressionIsANewScheduleStartingNow() async throws {
        let store = try store()
        let firer = firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [try definition("every: 1m")])
        // Edited to every 2m at t0 + 10 min: no catch-up of the new expression's past.
        let edited = try definition("every: 2m")
        #expect(await firer.tick(at: Self.t0 + 600, definitions: [edited]).fired.isEmpty)
        #expect(await firer.tick(at: Self.t0 + 721, definitions: [edited]).fired.count == 1)
        try await store.close()
    }

    /// A schedule a reload removed and brought back ten minutes later: the
    /// occurrences it was absent for are missed, as after downtime.
    @Test(arguments: [("none", 0), ("latest", 1), ("all", 10)])
    func aScheduleBackAfterAReloadCatchesUpAsConfigured(policy: String, missedFired: Int) async throws {
        let store = try store()
        let report = try definition("every: 1m\ncatch-up: \(policy)\noverlap: allow")
        let firer = firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        #expect(await firer.tick(at: Self.t0 + 61, definitions: [report]).fired.count == 1)
        _ = await firer.tick(at: Self.t0 + 62, definitions: [])
        let back = await firer.tick(at: Self.t0 + 665, definitions: [report])
        #expect(back.fired.count == missedFired)
        #expect(
            try await scheduled(store) == [Self.t0 + 60]
                + (2...11).map { Self.t0 + Double($0 * 60) }.suffix(missedFired))
        // On time from then on.
        #expect(await firer.tick(at: Self.t0 + 721, definitions: [report]).fired.count == 1)
        #expect(try await scheduled(store).last == Self.t0 + 720)
        try await store.close()
    }

    /// The clock stepped forward a day (or the machine slept): the
    /// occurrences it went past are missed, as after downtime, not a
    /// backlog of 1,440 on-time ones.
    @Test(arguments: [("none", 0), ("latest", 1), ("all", 100)])
    func aClockStepForwardCatchesUpAsConfigured(policy: String, fired: Int) async throws {
        let store = try store()
        let report = try definition("every: 1m\ncatch-up: \(policy)\noverlap: allow")
        let logs = LogLines()
        let firer = firer(store, logs: logs)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        #expect(await firer.tick(at: Self.t0 + 61, definitions: [report]).fired.count == 1)
        let stepped = Self.t0 + 86_400 + 90
        firer.clockStepped(by: 86_400, at: stepped)
        #expect(await firer.tick(at: stepped, definitions: [report]).fired.count == fired)
        #expect(logs.all.contains { $0.contains("the clock moved forward by 1d") })
        // On time from then on.
        #expect(await firer.tick(at: Self.t0 + 86_400 + 121, definitions: [report]).fired.count == 1)
        #expect(try await scheduled(store).last == Self.t0 + 86_400 + 120)
        try await store.close()
    }

    /// Edited X → Y → X: X's gap is missed like any other.
    @Test func anExpressionEditedBackCatchesUpAsConfigured() async throws {
        let store = try store()
        let x = try definition("every: 1m\ncatch-up: none\noverlap: allow")
        let y = try definition("every: 2m\ncatch-up: none\noverlap: allow")
        let firer = firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [x])
        _ = await firer.tick(at: Self.t0 + 61, definitions: [x])
        _ = await firer.tick(at: Self.t0 + 62, definitions: [y])
        #expect(await firer.tick(at: Self.t0 + 605, definitions: [x]).fired.isEmpty)
        #expect(await firer.tick(at: Self.t0 + 661, definitions: [x]).fired.count == 1)
        #expect(try await scheduled(store) == [Self.t0 + 60, Self.t0 + 660])
        try await store.close()
    }

    /// A mark older than this firer's start, of a schedule a reload adds
    /// later: everything up to the reload is missed, not only what fell
    /// before the start.
    @Test func aScheduleAddedByAReloadCatchesUpToTheReload() async throws {
        let store = try store()
        let report = try definition("every: 1m\ncatch-up: latest\noverlap: allow")
        _ = try await store.startSchedule(definition: "report", schedule: report.schedules[0].key, at: Self.t0 - 600)
        let firer = firer(store)
        _ = await firer.tick(at: Self.t0, definitions: [])
        #expect(await firer.tick(at: Self.t0 + 305, definitions: [report]).fired.count == 1)
        #expect(try await scheduled(store) == [Self.t0 + 300])
        try await store.close()
    }

    /// Another jobd that first sees the schedule a second after an
    /// occurrence the running jobd has not fired yet leaves it to that
    /// jobd (catch-up: none skips only what nobody fired in time).
    @Test func catchUpNoneLeavesAJustPassedOccurrenceToTheJobdFiringIt() async throws {
        let store = try store()
        let other = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: store.configuration.path, checkpointInterval: nil))
        let report = try definition("every: 1m\ncatch-up: none\noverlap: allow")
        let running = firer(store)
        _ = await running.tick(at: Self.t0, definitions: [report])
        let starting = firer(other)
        let first = await starting.tick(at: Self.t0 + 61, definitions: [report])
        #expect(first.fired.isEmpty)
        #expect(try #require(first.next) <= Self.t0 + 61 + ScheduleFirer.handOver)
        #expect(await running.tick(at: Self.t0 + 61.5, definitions: [report]).fired.count == 1)
        #expect(try await scheduled(store) == [Self.t0 + 60])
        // Alone, the starting jobd skips it once nobody fired it in time.
        let alone = try definition("every: 1m\ncatch-up: none\noverlap: allow", name: "alone")
        _ = try await other.startSchedule(definition: "alone", schedule: alone.schedules[0].key, at: Self.t0)
        let late = firer(other)
        #expect(await late.tick(at: Self.t0 + 61, definitions: [alone]).fired.isEmpty)
        #expect(await late.tick(at: Self.t0 + 61 + ScheduleFirer.handOver, definitions: [alone]).fired.isEmpty)
        #expect(try await other.scheduleMarks().first { $0.definition == "alone" }?.firedThrough == Self.t0 + 60)
        try await other.close()
        try await store.close()
    }

    /// A schedule whose jobs the store refuses holds up no other, and its
    /// failure is logged once, not at every tick.
    @Test func aFailingScheduleHoldsUpNoOtherAndIsLoggedOnceInAWhile() async throws {
        let store = try store(valueCap: 1024)
        let logs = LogLines()
        let big = try definition(
            "every: 1m\noverlap: allow\ninput: \(String(repeating: "x", count: 2000))", name: "abig")
        let small = try definition("every: 1m\noverlap: allow", name: "bsmall")
        let firer = firer(store, logs: logs)
        _ = await firer.tick(at: Self.t0, definitions: [big, small])
        for minute in 1...9 {
            let tick = await firer.tick(at: Self.t0 + Double(minute * 60) + 1, definitions: [big, small])
            #expect(tick.fired.count == 1 && tick.deferred, "minute \(minute)")
        }
        let jobs = try await store.list(JobQuery(limit: 100)).jobs
        #expect(jobs.count == 9 && jobs.allSatisfy { $0.definition == "bsmall" })
        var failures = logs.all.filter { $0.contains("of abig could not fire") }
        #expect(failures.count == 1, "\(failures)")
        #expect(failures.first?.contains("store.value-cap") == true, "\(failures)")
        #expect(failures.first?.contains("maxValueBytes") == false, "\(failures)")
        // Logged again once the interval has passed.
        _ = await firer.tick(at: Self.t0 + 60 + ScheduleFirer.failureLogInterval + 2, definitions: [big, small])
        failures = logs.all.filter { $0.contains("of abig could not fire") }
        #expect(failures.count == 2, "\(failures)")
        try await store.close()
    }

    /// A calendar expression that never fires, after a restart: its missed
    /// occurrences are looked for once, not at every tick.
    @Test func aScheduleThatNeverFiresIsLookedBackOnOnce() async throws {
        let store = try store()
        let never = try definition("calendar: \"*-02-30 00:00\"", name: "never")
        _ = try await store.startSchedule(definition: "never", schedule: never.schedules[0].key, at: Self.t0 - 600)
        let firer = firer(store)
        for second in 0..<20 {
            let tick = await firer.tick(at: Self.t0 + Double(second), definitions: [never])
            #expect(tick.fired.isEmpty && tick.next == nil)
        }
        #expect(firer.lookBacks == 1)
        try await store.close()
    }

    /// Two schedules of one definition on one instant: one job, and the
    /// other schedule's occurrence is logged, counted and recorded on it.
    @Test func coincidingSchedulesMakeOneJobAndSaySo() async throws {
        let store = try store()
        let logs = LogLines()
        let report = try definition(
            """
            - every: 1m
              input: from-A
              overlap: allow
            - every: 2m
              input: from-B
              overlap: allow
            """)
        let firer = firer(store, logs: logs)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        let tick = await firer.tick(at: Self.t0 + 121, definitions: [report])
        #expect(tick.fired.count == 2 && tick.skipped == 1)
        let jobs = try await store.list(JobQuery(limit: 10)).jobs
        // every: 2m falls on even minutes since 1970: t0 + 60.
        let shared = try #require(jobs.first { $0.scheduledFor == Self.t0 + 60 })
        #expect(shared.input == Data("from-A".utf8))
        #expect(try await store.events(of: shared.id).map(\.kind) == ["schedule-skipped"])
        #expect(
            logs.all.contains {
                $0.contains("schedule every: 2m of report: occurrence") && $0.contains("made no job: job \(shared.id)")
            },
            "\(logs.all)")
        try await store.close()
    }

    /// The log names an occurrence to its fraction of a second.
    @Test func theLogKeepsAnOccurrencesFraction() async throws {
        let store = try store()
        let logs = LogLines()
        let report = try definition("calendar: \"*-*-* *:*:00/7.5\"\noverlap: allow")
        let firer = firer(store, logs: logs)
        _ = await firer.tick(at: Self.t0, definitions: [report])
        #expect(await firer.tick(at: Self.t0 + 8, definitions: [report]).fired.count == 1)
        #expect(logs.all.contains { $0.contains("occurrence 2030-03-17T17:47:07.5Z is job") }, "\(logs.all)")
        try await store.close()
    }
}
