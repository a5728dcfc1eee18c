import Foundation
import JobCalendar
import JobConfig
import JobControl
import JobDaemon
import JobStore
import JobStoreSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Schedules in real time, with the real jobd: two jobds on one
/// database fire each occurrence once; a restart catches up as configured;
/// `overlap: skip` never runs two occurrences at once.
@Suite struct ScheduleDaemonTests {
    static func definition(_ schedule: String, stage: String = "run: [date, +%s]") -> String {
        """
        schedule:
        \(schedule.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        pipeline:
          - then: work
            \(stage)
        """
    }

    /// The occurrences the database holds jobs for, in order.
    func occurrences(_ store: SQLiteJobStore, _ definition: String = "tick") async throws -> [Date] {
        try await store.list(JobQuery(definition: definition, limit: 1000)).jobs.compactMap(\.scheduledFor).sorted()
    }

    func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
    }

    @Test func twoJobdsOnOneDatabaseFireEachOccurrenceOnce() async throws {
        let tick = Self.definition("every: 2s\noverlap: allow")
        let first = try DaemonHarness(definitions: ["tick": tick])
        try first.start()
        _ = try #require(await first.notify.waitFor("READY", "1"))
        let second = try DaemonHarness(definitions: ["tick": tick], database: first.databasePath)
        try second.start()
        _ = try #require(await second.notify.waitFor("READY", "1"))
        try await Task.sleep(for: .seconds(20))
        for harness in [first, second] { harness.signal(SIGTERM) }
        for harness in [first, second] { #expect(await harness.exitStatus() == 0, "\(harness.log)") }

        let store = try first.openStore()
        let times = try await occurrences(store)
        #expect(times.count >= 8, "\(times)")
        #expect(Set(times).count == times.count, "an occurrence fired twice: \(times)")
        // Every 2 s, none missed between the first and the last.
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) == 2, "\(times)")
        }
        for time in times { #expect(time.timeIntervalSince1970.truncatingRemainder(dividingBy: 2) == 0) }
        // Both hosts fired some (whichever got there first), and every job ran once.
        let jobs = try await store.list(JobQuery(definition: "tick", limit: 1000)).jobs
        #expect(jobs.allSatisfy { $0.state == .fulfilled || $0.state == .pending || $0.state == .running })
        try await store.close()
    }

    @Test func aRestartCatchesUpTheLatestMissedOccurrenceOnly() async throws {
        let harness = try DaemonHarness(definitions: [
            "tick": Self.definition("every: 1s\ncatch-up: latest\noverlap: allow")
        ])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        try await waitUntil(.seconds(10)) { try await occurrences(store).count >= 2 }
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        let before = try await occurrences(store)
        let lastBefore = try #require(before.last)
        try await Task.sleep(for: .seconds(5))
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1", from: 0))
        try await waitUntil(.seconds(10)) { try await occurrences(store).count >= before.count + 3 }
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)

        let after = try await occurrences(store).filter { $0 > lastBefore }
        // Of the ~5 occurrences missed while jobd was down, only the latest ran:
        // one gap in the sequence, then every second again.
        let gaps = zip(after, after.dropFirst()).filter { $1.timeIntervalSince($0) > 1 }
        #expect(after.first.map { $0.timeIntervalSince(lastBefore) >= 4 } == true, "\(before) | \(after)")
        #expect(gaps.isEmpty, "after the catch-up, every occurrence: \(after)")
        try await store.close()
    }

    @Test func overlapSkipNeverRunsTwoAtOnce() async throws {
        let harness = try DaemonHarness(definitions: [
            "tick": Self.definition("every: 1s\noverlap: skip", stage: "shell: 'sleep 2.5; date +%s'")
        ])
        let began = ContinuousClock.now
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        try await Task.sleep(for: .seconds(9))
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        // Each run takes 2.5 s and none overlaps: at most one a 2.5 s of the
        // time jobd ran (a loaded machine stretches that time, not the rule).
        let ran = (ContinuousClock.now - began) / .milliseconds(2500)
        let jobs = try await store.list(JobQuery(definition: "tick", limit: 100)).jobs.sorted { $0.id < $1.id }
        #expect(jobs.count >= 2 && Double(jobs.count) <= ran + 1, "\(jobs.map(\.scheduledFor)) in \(ran) runs' time")
        for (earlier, later) in zip(jobs, jobs.dropFirst()) {
            // The next occurrence fired only once the previous job had ended.
            guard let finished = earlier.finishedAt, let started = later.startedAt else { continue }
            #expect(started >= finished, "job \(later.id) started before job \(earlier.id) ended")
            #expect(later.createdAt >= finished, "job \(later.id) was made while job \(earlier.id) ran")
        }
        var skipped = 0
        for job in jobs { skipped += try await store.events(of: job.id).filter { $0.kind == "schedule-skipped" }.count }
        #expect(skipped >= 3, "the occurrences that fell while a job ran are recorded as skipped")
        try await store.close()
    }

    /// jobd reads schedules without timezone: in TZ's zone, glibc's
    /// `:Area/City` form included, and says so over the socket; a TZ it
    /// cannot read is a warning in its log at start.
    @Test func theHostZoneIsTZsAndJobdSaysWhichItIs() async throws {
        let harness = try DaemonHarness(definitions: ["daily": Self.definition("cron: \"0 9 * * *\"")])
        try harness.start(environment: ["TZ": ":Asia/Kolkata"])
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let status = try #require(try ControlClient.status(socketPath: harness.socketPath))
        #expect(status.timezone == "Asia/Kolkata")
        #expect(!harness.log.contains("TZ="), "\(harness.log)")
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)

        let seen = harness.notify.all.count
        try harness.start(environment: ["TZ": "CET-1CEST,M3.5.0,M10.5.0/3"])
        _ = try #require(await harness.notify.waitFor("READY", "1", from: seen))
        #expect(
            harness.log.contains("TZ=\"CET-1CEST,M3.5.0,M10.5.0/3\" is a POSIX rule string, which jobd does not read"),
            "\(harness.log)")
        let fallback = try #require(try ControlClient.status(socketPath: harness.socketPath))
        #expect(fallback.timezone == HostTimeZone(environment: [:]).zone.identifier)
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
    }
}
