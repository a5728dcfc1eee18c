import Foundation
import JobStore
import JobStoreSQLite
import Testing

@testable import JobEngine

/// A job that resumes after a crash reads its recorded rejection back with
/// the code it was recorded with: a rejection that ends the job still does,
/// and only a stage's own failure reaches a `recover` stage.
@Suite struct EngineResumeCodeTests {
    static let definition = """
        name: resumed
        pipeline:
          - then: broken
            shell: "exit 3"
          - recover: fallback
            run: [echo, fallback]
          - done: publish
            run: [cat]
        """

    /// Runs the job as a runner that died after recording stage 0's
    /// rejection (with `code`, or none as a jobd before schema version 2
    /// wrote it) would leave it, then lets an engine resume it.
    func resume(recordedWith code: String?) async throws -> JobDetail {
        let harness = try EngineHarness([Self.definition], start: false)
        let id = try await harness.submit("resumed")
        let claimed = try #require(
            try await harness.store.claim(pool: "default", owner: "died", limit: 1, leaseDuration: .milliseconds(50))
                .first)
        #expect(claimed.job.id == id)
        try await harness.store.recordStageResult(
            StageResult(
                lease: claimed.lease, position: 0, outcome: .rejected("the first runner's rejection"), errorCode: code))
        #expect(try await harness.store.job(id)?.stages[0].errorCode == code)
        try await Task.sleep(for: .milliseconds(100))
        harness.engine.start()
        let detail = try await harness.resolved(id)
        await harness.stop()
        return detail
    }

    @Test func aRejectionThatEndsTheJobStillDoesAfterARestart() async throws {
        for code in ["interrupted", "cancelled", "job-timed-out", "promise-leaked"] {
            let detail = try await resume(recordedWith: code)
            // A cancellation ends the job as cancelled, as it would have
            // without the restart; the others reject it.
            #expect(detail.job.state == (code == "cancelled" ? .cancelled : .rejected), "\(code)")
            #expect(detail.stage("fallback")?.state == .skipped, "\(code): recover must not take it")
            #expect(detail.stage("publish")?.state == .skipped, "\(code)")
            #expect(
                detail.job.error?.contains("the first runner's rejection") == true, "\(code): \(detail.job.error ?? "")"
            )
            #expect(detail.stage("broken")?.errorCode == code)
        }
    }

    @Test func aStagesOwnFailureReachesRecoverAfterARestart() async throws {
        // stage-failed and stage-timed-out, and a rejection recorded before
        // codes were kept (read back as resumed-rejection): recoverable.
        for code in ["stage-failed", "stage-timed-out", nil] {
            let detail = try await resume(recordedWith: code)
            #expect(detail.job.state == .fulfilled, "\(code ?? "no code"): \(detail.job.error ?? "")")
            #expect(detail.stage("fallback")?.state == .fulfilled, "\(code ?? "no code")")
            #expect(detail.resultText == "fallback\n")
        }
    }

    @Test func aStageFailureIsRecordedWithItsCode() async throws {
        let harness = try EngineHarness([
            """
            name: failing
            pipeline:
              - then: broken
                shell: "exit 3"
              - then: slow
                shell: "sleep 5"
                timeout: 50ms
            """,
            """
            name: slow
            pipeline:
              - then: nap
                shell: "sleep 5"
                timeout: 50ms
            """,
        ])
        let failing = try await harness.resolved(try await harness.submit("failing"))
        #expect(failing.stage("broken")?.errorCode == "stage-failed")
        #expect(failing.stage("broken")?.exitCode == 3)
        #expect(failing.stage("slow")?.errorCode == nil, "skipped: no code")
        let slow = try await harness.resolved(try await harness.submit("slow"))
        #expect(slow.stage("nap")?.errorCode == "stage-timed-out")
        await harness.stop()
    }
}
