import Foundation
import JobConfig
import JobControl
import JobStore
import JobStoreSQLite
import Testing

/// `jobctl cancel` and `jobctl retry`.
@Suite struct CancelRetryTests {
    @Test func cancelAPendingJobCancelsItAtOnce() async throws {
        let sandbox = try Sandbox()
        _ = try await sandbox.jobctl(["submit", "hello"])
        let result = try await sandbox.jobctl(["cancel", "1"])
        #expect(result.status == 0, "\(result)")
        #expect(result.out == "job 1 cancelled; it had not started\n")
        let detail = try await sandbox.job(1)
        #expect(detail.job.state == .cancelled)
        #expect(detail.stages.allSatisfy { $0.state == .skipped })
    }

    @Test func cancelARunningJobFlagsItAndTellsJobd() async throws {
        let sandbox = try Sandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        defer { daemon.stop() }
        let id = try await sandbox.seed(.running)
        let result = try await sandbox.jobctl(["cancel", String(id), "--json"])
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        #expect(json["id"] as? Int == Int(id))
        #expect(json["outcome"] as? String == "requested")
        #expect(daemon.receivedRequests == [ControlRequest(.cancel, job: id)])
        let job = try await sandbox.job(id).job
        #expect(job.state == .running && job.cancelRequested)
    }

    @Test func cancelAnEndedJobChangesNothing() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.fulfilled)
        let text = try await sandbox.jobctl(["cancel", String(id)])
        #expect(text.status == 0, "\(text)")
        #expect(text.out == "job \(id) had already ended fulfilled; nothing to cancel\n")
        let json = try await sandbox.jobctl(["cancel", String(id), "--json"]).json()
        #expect(json["outcome"] as? String == "already-resolved")
        #expect(json["state"] as? String == "fulfilled")
    }

    @Test func retryKeepsTheAttemptAndQueuesTheJobAgain() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.rejected, error: "exit status 3: flaky")
        let result = try await sandbox.jobctl(["retry", String(id)])
        #expect(result.status == 0, "\(result)")
        #expect(result.out == "job \(id) queued again as attempt 2\n")
        #expect(result.errLines == ["jobctl: jobd is not running: job \(id) is queued and will start when jobd runs"])

        let status = try await sandbox.jobctl(["status", String(id)])
        #expect(status.outLines.first == "job \(id)  hello  pending  attempt 2")
        #expect(status.out.contains("earlier: attempt 1 rejected after "))
        #expect(status.out.contains(": exit status 3: flaky"))
        let json = try await sandbox.jobctl(["status", String(id), "--json"]).json()
        let history = try #require(json["history"] as? [[String: Any]])
        #expect(history.count == 1)
        #expect(history[0]["state"] as? String == "rejected")
        #expect((history[0]["stages"] as? [[String: Any]])?.count == 3)
    }

    @Test func retryWithADelayAndJSON() async throws {
        let sandbox = try Sandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        defer { daemon.stop() }
        let id = try await sandbox.seed(.cancelled)
        let result = try await sandbox.jobctl(["retry", String(id), "--delay", "10m", "--json"])
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        #expect(json["state"] as? String == "pending")
        #expect(json["attempt"] as? Int == 2)
        #expect(json["daemon"] as? String == "nudged")
        let runAt = try #require(json["run_at"] as? String)
        let created = try #require(json["created_at"] as? String)
        #expect(runAt > created)
        #expect(daemon.received == [.nudge])
    }

    @Test func retryOfARunningJobIsRefused() async throws {
        let sandbox = try Sandbox()
        let id = try await sandbox.seed(.running)
        let result = try await sandbox.jobctl(["retry", String(id)])
        #expect(result.status == 65, "\(result)")
        #expect(result.errLines.count == 1)
        #expect(result.stderr.contains("cannot retry job \(id): it is running"))
    }
}
