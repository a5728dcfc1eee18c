import Foundation
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

@testable import JobEngine

/// Retries with their attempt numbers, stage timeouts and job timeouts.
@Suite struct EngineRetryTimeoutTests {
    @Test func retriesCountAttemptsInSQLiteAndTheEnvironment() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness([
            """
            name: flaky
            retry: { attempts: 3, backoff: 50ms, max-backoff: 80ms, jitter: false }
            pipeline:
              - then: third-time-lucky
                shell: 'echo "$JOBD_ATTEMPT" >> \(out)/attempts; [ "$JOBD_ATTEMPT" -ge 3 ] || exit 9; echo ok'
            """,
            """
            name: hopeless
            pipeline:
              - then: never
                shell: 'echo "$JOBD_ATTEMPT" >> \(out)/hopeless; exit 9'
                retry: { attempts: 2, backoff: 10ms }
            """,
        ])
        let started = ContinuousClock.now
        let lucky = try await harness.resolved(try await harness.submit("flaky"))
        #expect(ContinuousClock.now - started >= .milliseconds(130), "backoff 50ms, then 80ms (capped from 100ms)")
        #expect(lucky.job.state == .fulfilled)
        #expect(lucky.stage("third-time-lucky")?.attempts == 3)
        #expect((try String(contentsOfFile: out + "/attempts", encoding: .utf8)) == "1\n2\n3\n")
        let events = try await harness.store.events(of: lucky.job.id).filter { $0.kind == "stage-retry" }
        #expect(events.count == 2)
        #expect(events.first?.message.contains("attempt 1 failed") == true)

        let hopeless = try await harness.resolved(try await harness.submit("hopeless"))
        #expect(hopeless.job.state == .rejected)
        #expect(hopeless.stage("never")?.attempts == 2)
        #expect(hopeless.stage("never")?.exitCode == 9)
        #expect((try String(contentsOfFile: out + "/hopeless", encoding: .utf8)) == "1\n2\n")
        await harness.stop()
    }

    @Test func aStageTimeoutEndsItsProcessGroupAndCanBeRetried() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness(
            [
                """
                name: slow
                pipeline:
                  - then: stuck
                    shell: 'echo $$ >> \(out)/pids; sleep 30 & wait'
                    timeout: 200ms
                    retry: { attempts: 2, backoff: 10ms }
                  - catch: noted
                    run: [cat]
                """
            ], killGrace: .milliseconds(200))
        let detail = try await harness.resolved(try await harness.submit("slow"))
        #expect(recordedRunTime(detail) < .seconds(15), "stopped early: the processes alone would take 30 s")
        #expect(detail.job.state == .rejected)
        let stuck = try #require(detail.stage("stuck"))
        #expect(stuck.attempts == 2)
        #expect(stuck.error?.contains("ran past the stage's timeout of 200ms") == true, "\(stuck.error ?? "")")
        #expect(detail.stage("noted")?.state == .fulfilled)
        let pids = (try String(contentsOfFile: out + "/pids", encoding: .utf8)).split(separator: "\n").compactMap {
            Int32($0)
        }
        #expect(pids.count == 2)
        for pid in pids {
            #expect(await processGroupGone(pid), "nothing is left of process group \(pid)")
        }
        await harness.stop()
    }

    @Test func aJobTimeoutStopsTheJobAndRunsItsCleanup() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness(
            [
                """
                name: too-long
                timeout: 300ms
                pipeline:
                  - then: first
                    sleep: 100ms
                  - then: long
                    run: [sleep, "30"]
                  - then: after
                    run: [echo, never]
                  - recover: rescue
                    run: [echo, rescued]
                  - finally: cleanup
                    shell: "echo cleaned > \(out)/cleanup"
                """
            ], killGrace: .milliseconds(100))
        let detail = try await harness.resolved(try await harness.submit("too-long"))
        #expect(recordedRunTime(detail) < .seconds(15), "stopped early: the processes alone would take 30 s")
        #expect(detail.job.state == .rejected)
        #expect(detail.job.error?.contains("ran past its timeout of 300ms") == true, "\(detail.job.error ?? "")")
        #expect(detail.stage("first")?.state == .fulfilled)
        #expect(detail.stage("long")?.state == .rejected)
        #expect(detail.stage("after")?.state == .skipped)
        #expect(detail.stage("rescue")?.state == .skipped, "a job timeout is not recoverable")
        #expect(detail.stage("cleanup")?.state == .fulfilled)
        #expect((try? String(contentsOfFile: out + "/cleanup", encoding: .utf8)) == "cleaned\n")
        await harness.stop()
    }
}
