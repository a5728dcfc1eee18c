import Foundation
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

@testable import JobEngine

/// `jobctl cancel`: the store's flag, seen through lease renewals.
@Suite struct EngineCancelTests {
    @Test func cancelStopsTheRunningStageAndRunsTheCleanup() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness(
            [
                """
                name: cancellable
                pipeline:
                  - then: long
                    shell: 'echo $$ > \(out)/pid; sleep 600 & wait'
                  - then: next
                    run: [echo, never]
                  - recover: rescue
                    run: [echo, rescued]
                  - tap: look
                    run: [echo, tapped]
                  - ensure: ensured
                    shell: "echo ensure >> \(out)/marks"
                  - catch: caught
                    shell: "cat > \(out)/caught"
                  - finally: cleanup
                    shell: "echo finally >> \(out)/marks"
                """
            ], killGrace: .milliseconds(200))
        let id = try await harness.submit("cancellable")
        _ = try await harness.waitFor(id) { $0.stage("long")?.state == .running }
        try await Task.sleep(for: .milliseconds(100))
        let outcome = try await harness.store.requestCancellation(of: id)
        #expect(outcome == .requested)
        let detail = try await harness.resolved(id, within: .seconds(10))
        #expect(detail.job.state == .cancelled, "\(detail.job.error ?? "")")
        #expect(detail.job.error?.contains("cancel") == true)
        #expect(detail.stage("long")?.state == .rejected)
        #expect(detail.stage("next")?.state == .skipped)
        #expect(detail.stage("rescue")?.state == .skipped)
        #expect(detail.stage("look")?.state == .skipped)
        #expect(detail.stage("ensured")?.state == .fulfilled)
        #expect(detail.stage("caught")?.state == .fulfilled)
        #expect(detail.stage("cleanup")?.state == .fulfilled)
        #expect((try String(contentsOfFile: out + "/marks", encoding: .utf8)) == "ensure\nfinally\n")
        #expect((try String(contentsOfFile: out + "/caught", encoding: .utf8)).contains("cancel"))
        let pid =
            Int32(
                (try String(contentsOfFile: out + "/pid", encoding: .utf8)).trimmingCharacters(
                    in: .whitespacesAndNewlines)) ?? 0
        #expect(pid > 0)
        #expect(await processGroupGone(pid), "the stage's process group is gone")
        await harness.stop()
    }

    @Test func cancelDuringABackoffOrASleep() async throws {
        let harness = try EngineHarness([
            """
            name: waiting
            pipeline:
              - then: nap
                sleep: 600s
            """,
            """
            name: backing-off
            pipeline:
              - then: flaky
                fail: "not yet"
                retry: { attempts: 5, backoff: 600s }
            """,
        ])
        let napping = try await harness.submit("waiting")
        let backing = try await harness.submit("backing-off")
        _ = try await harness.waitFor(napping) { $0.stage("nap")?.state == .running }
        _ = try await harness.waitFor(backing) { $0.stage("flaky")?.attempts == 0 && $0.job.state == .running }
        try await Task.sleep(for: .milliseconds(200))
        let requested = Date()
        _ = try await harness.store.requestCancellation(of: napping)
        _ = try await harness.store.requestCancellation(of: backing)
        let (napped, backedOff) = (try await harness.resolved(napping), try await harness.resolved(backing))
        #expect(napped.job.state == .cancelled)
        #expect(backedOff.job.state == .cancelled)
        // By the engine's own stamp of the end (the test's awaits may resume late).
        for detail in [napped, backedOff] {
            let end = try #require(detail.job.finishedAt)
            #expect(end.timeIntervalSince(requested) < 300, "stopped early: the sleep and the backoff alone take 600 s")
        }
        await harness.stop()
    }
}
