import Foundation
import JobStore
import JobStoreSQLite
import Spawn
import Testing

/// `jobctl retry|cancel|delete` with a filter: the count, --dry-run, --yes, and an interrupted run finished.
@Suite struct BulkActionTests {
    @Test func withoutYesItCountsAndChangesNothingAndDryRunListsTheIDs() async throws {
        let sandbox = try Sandbox()
        let rejected = [
            try await sandbox.seed(.rejected), try await sandbox.seed(.rejected),
            try await sandbox.seed(.rejected, definition: "failing"),
        ]
        _ = try await sandbox.seed(.fulfilled)

        let count = try await sandbox.jobctl(["retry", "--state", "rejected", "--definition", "hello"])
        #expect(count.status == 0, "\(count)")
        #expect(count.out == "2 jobs to retry; add --yes to retry them (--dry-run lists them)\n")
        let dry = try await sandbox.jobctl(["retry", "--state", "rejected", "--dry-run"])
        #expect(dry.outLines == rejected.map(String.init), "\(dry)")
        for id in rejected { #expect(try await sandbox.job(id).job.attempt == 1) }

        let done = try await sandbox.jobctl(["retry", "--state", "rejected", "--definition", "hello", "--yes"])
        #expect(done.status == 0, "\(done)")
        #expect(done.out == "retried 2 jobs (action 1)\n")
        #expect(try await sandbox.job(rejected[0]).job.attempt == 2)
        #expect(try await sandbox.job(rejected[2]).job.attempt == 1)
        let status = try await sandbox.jobctl(["status", String(rejected[0])])
        #expect(status.out.contains(" action: retried by "), "\(status)")
        #expect(status.out.contains(" via jobctl on "), "\(status)")
    }

    @Test func deleteTakesOnlyEndedJobsAndAnIDOrAFilterIsNeeded() async throws {
        let sandbox = try Sandbox()
        let ended = try await sandbox.seed(.cancelled)
        let pending = try await sandbox.seed(.pending)
        let refused = try await sandbox.jobctl(["delete", String(pending)])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("cannot delete job \(pending): it is pending"))
        let all = try await sandbox.jobctl(["delete", "--since", "1h", "--yes"])
        #expect(all.out == "deleted 1 job (action 1)\n", "\(all)")
        #expect(try await sandbox.jobCount() == 1)
        _ = ended

        let both = try await sandbox.jobctl(["cancel", String(pending), "--state", "pending"])
        #expect(both.status == 64, "\(both)")
        let neither = try await sandbox.jobctl(["cancel"])
        #expect(neither.status == 64, "\(neither)")
        let badTime = try await sandbox.jobctl(["cancel", "--since", "yesterday"])
        #expect(badTime.status == 64, "\(badTime)")
        #expect(badTime.stderr.contains("invalid --since \"yesterday\""))
    }

    @Test func listAndActByTheWordsOfTheValues() async throws {
        let sandbox = try Sandbox()
        let acme = try await sandbox.seed(.rejected, input: "invoice for ACME", error: "disk full")
        _ = try await sandbox.seed(.rejected, input: "invoice for Initech")
        let list = try await sandbox.jobctl(["list", "--match", "acme INVOICE", "--json"])
        #expect(list.status == 0, "\(list)")
        let jobs = try #require(try list.json()["jobs"] as? [[String: Any]])
        #expect(jobs.compactMap { $0["id"] as? Int } == [Int(acme)])
        let none = try await sandbox.jobctl(["list", "--match", "\" OR 1=1 --"])
        #expect(none.status == 0 && none.out.isEmpty, "\(none)")
        let retried = try await sandbox.jobctl(["retry", "--match", "disk full", "--yes"])
        #expect(retried.out == "retried 1 job (action 1)\n", "\(retried)")
        #expect(try await sandbox.job(acme).job.attempt == 2)
        let noWords = try await sandbox.jobctl(["list", "--match", "!!"])
        #expect(noWords.status == 64, "\(noWords)")
    }

    /// 2,000 jobs: jobctl killed with SIGKILL halfway; jobs it retried fail
    /// again (as jobd would make them); the same command run again retries
    /// only those left, so that every job is retried exactly once.
    @Test func aKilledRunIsFinishedByTheNextAndRetriesEachJobOnce() async throws {
        let sandbox = try Sandbox()
        let total = 2000
        let actor = ActionActor(name: "test", uid: nil, origin: "test")
        try await sandbox.withStore { store in
            _ = try await store.submit(
                (0..<total).map { _ in
                    NewJob(definition: "hello", stages: JobSeeder.stages)
                })
            try await Self.runAction(.cancel, JobSelection(states: [.pending]), actor, store)
        }
        let arguments = [
            "retry", "--state", "cancelled", "--definition", "hello", "--yes", "--batch-size", "10",
            "--pause", "10ms", "--config", sandbox.configPath,
        ]
        let first = try SpawnedProcess(
            jobctlPath, arguments, environment: childEnvironment([:]), directory: sandbox.folder)
        // Wait until some batches are in, then kill it.
        let store = try sandbox.store()
        var progress = 0
        while progress == 0 && first.isRunning {
            progress =
                try await store.actions(limit: 1, before: nil).first.map { $0.verb == .retry ? $0.changed : 0 } ?? 0
            if progress == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        first.signal(SIGKILL)
        _ = await first.waitForExit()
        let interrupted = try #require(try await store.actions(limit: 1, before: nil).first)
        #expect(interrupted.verb == .retry && !interrupted.isFinished, "\(interrupted)")
        #expect(interrupted.changed > 0 && interrupted.changed < total)

        // jobd ran the retried jobs, and they ended cancelled again: they match the filter once more.
        try await Self.runAction(.cancel, JobSelection(states: [.pending]), actor, store)
        try await store.close()

        let second = try await sandbox.jobctl(Array(arguments.dropLast(2)))
        #expect(second.status == 0, "\(second)")
        #expect(second.out == "retried \(total - interrupted.changed) jobs (action \(interrupted.id))\n", "\(second)")
        #expect(second.stderr.contains("resuming action \(interrupted.id)"), "\(second)")

        try await sandbox.withStore { store in
            let finished = try #require(try await store.actions(limit: 1, before: interrupted.id + 1).first)
            #expect(finished.isFinished && finished.changed == total && finished.matched == total)
            let page = try await store.list(JobQuery(limit: 1000, values: false))
            let next = try await store.list(JobQuery(limit: 1000, before: page.nextCursor, values: false))
            let jobs = page.jobs + next.jobs
            #expect(jobs.count == total)
            #expect(jobs.allSatisfy { $0.attempt == 2 }, "\(jobs.filter { $0.attempt != 2 }.map(\.id).prefix(10))")
            for id in jobs.map(\.id) {
                let retries = try await store.events(of: id).filter { $0.message.hasPrefix("retried by") }
                #expect(retries.count == 1, "job \(id): \(retries)")
            }
        }
    }

    private static func runAction(
        _ verb: ActionVerb, _ selection: JobSelection, _ actor: ActionActor, _ store: SQLiteJobStore
    ) async throws {
        let (count, highest) = try await store.countMatching(selection, for: verb, ids: 1...Int64.max)
        var action = try await store.startAction(
            ActionStart(
                verb: verb, actor: actor, filter: "setup", selection: selection, matched: count, highestID: highest))
        while !action.isFinished { action = try await store.continueAction(action.id, batchSize: 1000) }
    }
}
