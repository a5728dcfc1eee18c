import Foundation
import JobConfig
import JobStore
import Testing

/// `jobctl schedules` (issue 20): each schedule, its zone, next and last fire, latest job.
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
            _ = try await store.fireOccurrence(ScheduleOccurrence(
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
}
