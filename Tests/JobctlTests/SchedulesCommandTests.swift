import Foundation
import JobConfig
import JobConfigStore
import JobControl
import JobStore
import JobStoreSQLite
import Testing

/// `jobctl schedules`: each schedule, its zone, next and last fire, latest job.
@Suite struct SchedulesCommandTests {
    static let nightly = """
        schedule:
          - cron: "30 2 * * *"
            timezone: Europe/Berlin
          - every: 15m
            overlap: allow
        pipeline:
          - then: work
            run: [cat]
        """

    @Test func listsEverySchedule() async throws {
        let sandbox = try Sandbox(definitions: ["hello": TestDefinitions.hello, "nightly": Self.nightly])
        // One occurrence fired, as jobd would have: a mark and a scheduled job.
        let occurrence = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 900).rounded(.down) * 900)
        try await sandbox.withStore { store in
            let definition = try #require(try sandbox.configuration().definitions["nightly"])
            let key = definition.schedules[1].key
            _ = try await store.startSchedule(definition: "nightly", schedule: key, at: occurrence - 900)
            _ = try await store.fireOccurrence(
                ScheduleOccurrence(
                    definition: "nightly", schedule: key, at: occurrence,
                    job: definition.newJob(scheduledFor: occurrence), overlap: .allow))
        }
        let text = try await sandbox.jobctl(["schedules"])
        #expect(text.status == 0, "\(text)")
        #expect(text.outLines.count == 3, "\(text)")
        #expect(text.out.contains("cron: 30 2 * * *") && text.out.contains("Europe/Berlin"))
        #expect(text.out.contains("every: 15m") && text.out.contains("1 pending"))

        let json = try await sandbox.jobctl(["schedules", "--json"]).json()
        let schedules = try #require(json["schedules"] as? [[String: Any]])
        #expect(schedules.count == 2)
        let every = try #require(schedules.first { $0["kind"] as? String == "every" })
        #expect(every["definition"] as? String == "nightly")
        #expect(every["expression"] as? String == "15m")
        #expect(every["timezone"] as? String == "UTC")
        #expect(every["overlap"] as? String == "allow")
        let next = try #require(every["next_fire"] as? String)
        #expect(next > (every["fired_through"] as? String ?? "~"), "the next fire is after the mark")
        let last = try #require(every["last_job"] as? [String: Any])
        #expect(last["id"] as? Int == 1 && last["state"] as? String == "pending")
        let cron = try #require(schedules.first { $0["kind"] as? String == "cron" })
        #expect(cron["fired_through"] is NSNull, "no jobd has run it yet")

        // The job it fired says which occurrence it is.
        let status = try await sandbox.jobctl(["status", "1", "--json"]).json()
        #expect((status["scheduled_for"] as? String)?.hasSuffix("Z") == true)
    }

    @Test func saysSoWhenNoneHasASchedule() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.jobctl(["schedules"])
        #expect(result.status == 0 && result.out.isEmpty, "\(result)")
        #expect(result.errLines.first?.contains("has a schedule") == true)
    }

    static let hourly = """
        schedule:
          cron: "15 * * * *"
        pipeline:
          - then: work
            run: [cat]
        """

    /// A schedule without `timezone:` is shown in the zone the running jobd
    /// reads it in, not in jobctl's own.
    @Test func aScheduleWithoutAZoneIsShownInJobdsZone() async throws {
        let sandbox = try Sandbox(definitions: ["hourly": Self.hourly])
        let daemon = try FakeDaemon(
            path: sandbox.socketPath,
            status: DaemonStatus(
                version: "0.1.0", pid: 4242, running: 0, pending: 0, pools: [:], draining: false,
                startedAt: "2026-11-21T08:00:00.000Z", config: sandbox.configPath, timezone: "Asia/Kolkata"))
        let result = try await sandbox.jobctl(["schedules", "--json"], environment: ["TZ": "Europe/Berlin"])
        daemon.stop()
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let schedule = try #require((try result.json()["schedules"] as? [[String: Any]])?.first)
        #expect(schedule["timezone"] as? String == "Asia/Kolkata")
        // 15 past in Kolkata (+05:30) is 45 past in UTC.
        #expect((schedule["next_fire"] as? String)?.contains(":45:00.000Z") == true, "\(schedule)")

        // No jobd: this host's zone, and stderr says so.
        let alone = try await sandbox.jobctl(["schedules"], environment: ["TZ": ":Europe/Berlin"])
        #expect(alone.status == 0, "\(alone)")
        #expect(alone.out.contains("Europe/Berlin") && alone.out.contains(":15:00.000Z"), "\(alone)")
        #expect(
            alone.errLines == [
                "jobctl: jobd does not answer on \(sandbox.socketPath): schedules without timezone: "
                    + "are shown in this host's zone, Europe/Berlin (jobd reads them in its own)"
            ], "\(alone)")
    }

    /// A definition that does not load is missing from the list: stderr
    /// says so, as `jobctl definitions` does.
    @Test func saysWhenDefinitionsWereNotLoaded() async throws {
        let broken = "schedule:\n  cron: \"*/15 25 * * *\"\npipeline:\n  - then: work\n    run: [cat]\n"
        let sandbox = try Sandbox(definitions: ["nightly": Self.nightly, "tzcron": broken])
        let result = try await sandbox.jobctl(["schedules"])
        #expect(result.status == 0, "\(result)")
        #expect(!result.out.contains("tzcron"))
        #expect(
            result.errLines.contains { $0.hasSuffix("some definitions were not loaded (jobctl validate lists them)") },
            "\(result)")
    }
}
