import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import Testing

/// `jobctl schedules run` and `backfill`: occurrences fired outside the calendar.
@Suite struct ScheduleRunCommandTests {
    static let nightly = """
        schedule:
          every: 15m
          input: "from the schedule"
        pipeline:
          - then: work
            run: [cat]
        """

    /// `run` makes one job now, marked manual: its id on stdout; `schedules`
    /// and `status` say it was fired by hand; the audit trail has it.
    @Test func runMakesAManualJob() async throws {
        let sandbox = try Sandbox(definitions: ["nightly": Self.nightly, "hello": TestDefinitions.hello])
        let run = try await sandbox.jobctl(["schedules", "run", "nightly"])
        #expect(run.status == 0, "\(run)")
        let id = try #require(Int64(run.out.trimmingCharacters(in: .whitespacesAndNewlines)), "\(run)")
        let status = try await sandbox.jobctl(["status", "\(id)"])
        #expect(status.out.contains("fired by hand (schedules run) by"), "\(status)")
        // Its page says who ran it, not the occurrence of a calendar; --json names the trigger.
        let scheduled = status.outLines.first { $0.contains("scheduled") } ?? ""
        #expect(scheduled.contains("run by hand at ") && !scheduled.contains("occurrence"), "\(status)")
        #expect(scheduled.contains(" via jobctl on ") && scheduled.contains("(action 1)"), "\(status)")
        let page = try await sandbox.jobctl(["--json", "status", "\(id)"]).json()
        #expect(page["fired_by"] as? String == "manual", "\(page)")
        #expect(status.out.contains("from the schedule"), "the schedule's input: \(status)")
        let listed = try await sandbox.jobctl(["schedules"])
        #expect(listed.out.contains("\(id) pending (manual)"), "\(listed)")
        let json = try await sandbox.jobctl(["--json", "schedules", "run", "nightly"]).json()
        #expect(json["fired_by"] as? String == "manual" && json["id"] as? Int == Int(id) + 1, "\(json)")
        let verbs = try await sandbox.withStore { store in
            try await store.queryStrings("SELECT verb FROM actions ORDER BY id")
        }
        #expect(verbs == ["run", "run"])
        let refused = try await sandbox.jobctl(["schedules", "run", "hello"])
        #expect(refused.status != 0 && refused.stderr.contains("has no schedule"), "\(refused)")
    }

    /// Backfilling the last two hours twice: the first run makes a job for
    /// each occurrence, the second none; a dry run lists what would fire.
    @Test func backfillTwiceMakesEachOccurrenceOnce() async throws {
        let sandbox = try Sandbox(definitions: ["nightly": Self.nightly])
        let dry = try await sandbox.jobctl([
            "schedules", "backfill", "nightly", "--from", "2h", "--to", "now", "--dry-run",
        ])
        #expect(dry.status == 0, "\(dry)")
        let occurrences = dry.outLines.count
        #expect((8...9).contains(occurrences), "every 15 min over 2 h: \(dry)")
        let first = try await sandbox.jobctl(
            ["schedules", "backfill", "nightly", "--from", dry.outLines[0], "--to", dry.outLines.last!, "--json"]
        ).json()
        #expect(first["made"] as? Int == occurrences && first["existed"] as? Int == 0, "\(first)")
        let made = try #require((first["jobs"] as? [Int])?.first, "\(first)")
        let status = try await sandbox.jobctl(["status", "\(made)"])
        let scheduled = status.outLines.first { $0.contains("scheduled") } ?? ""
        #expect(
            scheduled.contains("for the occurrence at ") && scheduled.contains(", fired by a backfill by ")
                && scheduled.contains("(action 1)"), "\(status)")
        #expect(try await sandbox.jobctl(["--json", "status", "\(made)"]).json()["fired_by"] as? String == "backfill")
        let second = try await sandbox.jobctl(
            ["schedules", "backfill", "nightly", "--from", dry.outLines[0], "--to", dry.outLines.last!])
        #expect(
            second.out == "\(occurrences) occurrences: made 0 jobs, \(occurrences) existed (action 2)\n", "\(second)")
        let backfilled = try await sandbox.withStore { store in
            try await store.queryStrings("SELECT count(*) FROM jobs WHERE fired_by = 'backfill'")
        }
        #expect(backfilled == ["\(occurrences)"])
        let future = try await sandbox.jobctl([
            "schedules", "backfill", "nightly", "--from", "1h", "--to", "2099-01-01T00:00:00Z",
        ])
        #expect(future.status != 0 && future.stderr.contains("in the future"), "\(future)")
    }
}

/// `jobctl pause … --cancel-running`: the paused pool's or definition's
/// running jobs are cancelled, as one audited cancel action; pending ones
/// and other definitions' are left alone.
@Suite struct PauseCancelRunningTests {
    @Test(arguments: [["definition", "hello"], ["pool", "default"]])
    func runningJobsOfThePausedScopeAreCancelled(_ target: [String]) async throws {
        let sandbox = try Sandbox(definitions: ["hello": TestDefinitions.hello])
        let (running, pending) = try await sandbox.withStore { store in
            let ids = try await store.submit(
                (0..<3).map { _ in NewJob(definition: "hello", stages: [StagePlan(name: "a", kind: "then")]) }
            ).map(\.id)
            let other = try await store.submit(
                NewJob(definition: "other", pool: "other", stages: [StagePlan(name: "a", kind: "then")])
            ).id
            _ = try await store.claim(pool: "default", owner: "t", limit: 2, leaseDuration: .seconds(30))
            _ = try await store.claim(pool: "other", owner: "t", limit: 1, leaseDuration: .seconds(30))
            return (Array(ids.prefix(2)) + [other], ids[2])
        }
        let paused = try await sandbox.jobctl(["pause"] + target + ["--cancel-running", "--json"]).json()
        let cancelled = try #require(paused["cancelled"] as? [String: Any], "\(paused)")
        #expect(cancelled["changed"] as? Int == 2, "\(paused)")
        let flags = try await sandbox.withStore { store in
            try await store.queryStrings(
                "SELECT id || ':' || cancel_requested FROM jobs WHERE state = 'running' ORDER BY id")
        }
        #expect(flags == ["\(running[0]):1", "\(running[1]):1", "\(running[2]):0"], "the other pool's job goes on")
        let audit = try await sandbox.withStore { store in
            try await store.queryStrings("SELECT verb || ' ' || changed || ' ' || filter FROM actions ORDER BY id")
        }
        #expect(audit.count == 2 && audit[0]?.hasPrefix("pause 0 \(target[0])") == true, "\(audit)")
        #expect(audit.last??.hasPrefix("cancel 2 --state running --\(target[0]) \(target[1])") == true, "\(audit)")
        let state = try await sandbox.withStore { store in try await store.job(pending)?.job.state }
        #expect(state == .pending)
    }
}
