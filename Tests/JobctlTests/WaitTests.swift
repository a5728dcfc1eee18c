import Foundation
import JobConfig
import JobControl
import JobStore
import JobStoreSQLite
import Testing

/// `submit --wait` and `wait`, against an engine running in the test
/// process behind a stand-in for jobd's socket.
@Suite struct WaitTests {
    @Test func submitWaitPrintsTheResultOfAFulfilledJob() async throws {
        let sandbox = try Sandbox()
        let daemon = try TestDaemon(sandbox)
        let result = try await sandbox.jobctl(["submit", "hello", "--input", "world", "--wait", "--timeout", "60s"])
        await daemon.stop()
        #expect(result.status == 0, "\(result)")
        #expect(result.out == "HELLO, WORLD!", "the result's bytes as they are")
        #expect(result.stderr.isEmpty, "no progress or notes off a terminal: \(result.stderr)")
        #expect(daemon.socket.received.first == .nudge)
    }

    @Test func submitWaitJSONPrintsTheJobWithItsStages() async throws {
        let sandbox = try Sandbox()
        let daemon = try TestDaemon(sandbox)
        let result = try await sandbox.jobctl(["submit", "hello", "--input", "json", "--wait", "--json"])
        await daemon.stop()
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        #expect(json["state"] as? String == "fulfilled")
        #expect(json["result"] as? String == "HELLO, JSON!")
        let stages = try #require(json["stages"] as? [[String: Any]])
        #expect(
            stages.map { $0["value"] as? String } == ["hello, json!", "HELLO, JSON!", "HELLO, JSON!", "HELLO, JSON!"])
    }

    @Test func submitWaitGivesUpAfterItsTimeout() async throws {
        let sandbox = try Sandbox()
        // No engine: the job stays pending.
        let result = try await sandbox.jobctl(["submit", "hello", "--wait", "--timeout", "250ms"])
        #expect(result.status == 75, "\(result)")
        #expect(
            result.errLines.last
                == "jobctl: error: job 1 is still pending after 250ms; it goes on (jobctl wait 1 waits again)")
        #expect(try await sandbox.job(1).job.state == .pending)
    }

    @Test func submitWaitExitsOneWhenTheJobIsRejected() async throws {
        let sandbox = try Sandbox()
        let daemon = try TestDaemon(sandbox)
        let result = try await sandbox.jobctl(["submit", "failing", "--input", "x", "--wait", "--timeout", "60s"])
        await daemon.stop()
        #expect(result.status == 1, "\(result)")
        #expect(result.out.isEmpty)
        #expect(result.errLines.count == 1, "\(result)")
        #expect(result.stderr.hasPrefix("jobctl: error: job 1 rejected at stage 2/3 check (then): "), "\(result)")
        #expect(result.stderr.contains("status is bad"))
    }

    @Test func waitJSONPrintsTheJobWhateverTheOutcome() async throws {
        let sandbox = try Sandbox()
        let submitted = try await sandbox.jobctl(["submit", "failing", "--input", "x"])
        #expect(submitted.status == 0, "\(submitted)")
        let daemon = try TestDaemon(sandbox, pollInterval: .milliseconds(100))
        let result = try await sandbox.jobctl(["wait", "1", "--json", "--timeout", "60s"])
        await daemon.stop()
        #expect(result.status == 1, "\(result)")
        let json = try result.json()
        #expect(json["state"] as? String == "rejected")
        #expect(json["error"] as? String != nil)
        let stages = try #require(json["stages"] as? [[String: Any]])
        #expect(stages.map { $0["state"] as? String } == ["fulfilled", "rejected", "fulfilled"])
        #expect(stages[1]["exit_code"] as? Int == 3)
        #expect(stages[1]["error_code"] as? String == "stage-failed")
        #expect(stages[0]["error_code"] is NSNull)
        #expect(result.errLines.count == 1, "the reason stays on stderr: \(result)")
    }

    @Test func waitGivesUpAfterItsTimeoutAndLeavesTheJob() async throws {
        let sandbox = try Sandbox()
        _ = try await sandbox.jobctl(["submit", "hello", "--input", "x"])
        let started = ContinuousClock.now
        let result = try await sandbox.jobctl(["wait", "1", "--timeout", "300ms"])
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("job 1 is still pending after 300ms"))
        let json = try await sandbox.jobctl(["wait", "1", "--timeout", "200ms", "--json"])
        #expect(json.status == 75)
        #expect(try json.json()["state"] as? String == "pending")
        #expect(try await sandbox.job(1).job.state == .pending)
    }

    @Test func waitForACancelledJobExitsOne() async throws {
        let sandbox = try Sandbox()
        _ = try await sandbox.jobctl(["submit", "hello", "--input", "x"])
        let cancelled = try await sandbox.jobctl(["cancel", "1"])
        #expect(cancelled.status == 0, "\(cancelled)")
        let result = try await sandbox.jobctl(["wait", "1"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("job 1 cancelled: cancelled before it started"))
    }

    @Test func waitForAFulfilledJobPrintsItsResultAtOnce() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.fulfilled, result: "the result\n")
        let result = try await sandbox.jobctl(["wait", String(id)])
        #expect(result.status == 0, "\(result)")
        #expect(result.out == "the result\n")
    }
}
