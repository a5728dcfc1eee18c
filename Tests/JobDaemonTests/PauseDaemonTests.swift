import Foundation
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `jobctl pause`, `pauses` and `resume` with the real binaries, on SQLite.
@Suite struct PauseDaemonTests {
    /// A paused definition's job stays pending while jobd runs a job
    /// submitted after it; `jobctl pauses` lists the pause; after `jobctl
    /// resume` the job runs.
    @Test(.timeLimit(.minutes(1)))
    func aPausedDefinitionWaitsUntilResumed() async throws {
        let quick = """
            pipeline:
              - then: done
                run: [sh, -c, 'echo ok']
            """
        let harness = try DaemonHarness(definitions: ["held": quick, "free": quick])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"), "jobd did not start: \(harness.log)")
        func jobctl(_ arguments: [String]) async throws -> String {
            let run = try await runCommand(builtProduct("jobctl"), arguments + ["--config", harness.configPath])
            #expect(run.status == 0, "jobctl \(arguments): \(run.error)")
            return run.output
        }
        let paused = try await jobctl(["pause", "definition", "held", "--reason", "vendor down"])
        #expect(paused == "definition held paused until resumed\n")
        let listed = try await jobctl(["pauses", "--json"])
        #expect(listed.contains(#""name": "held""#) && listed.contains(#""reason": "vendor down""#), "\(listed)")
        let held = try #require(
            Int64(try await jobctl(["submit", "held"]).trimmingCharacters(in: .whitespacesAndNewlines)))
        let free = try #require(
            Int64(try await jobctl(["submit", "free"]).trimmingCharacters(in: .whitespacesAndNewlines)))
        let store = try harness.openStore()
        // jobd claimed after `held` was submitted (it ran `free`): `held` was passed over.
        try await waitUntil(.seconds(20)) { try await store.job(free)?.job.state == .fulfilled }
        #expect(try await store.job(held)?.job.state == .pending)

        #expect(try await jobctl(["resume", "definition", "held"]) == "definition held resumed\n")
        try await waitUntil(.seconds(20)) { try await store.job(held)?.job.state == .fulfilled }
        #expect(try await jobctl(["pauses", "--json"]).contains(#""pauses": []"#))
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0, "\(harness.log)")
    }

    func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("not within \(limit)")
    }
}
