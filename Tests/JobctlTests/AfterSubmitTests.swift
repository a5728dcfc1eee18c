import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import Testing

/// `jobctl submit --after`: the job waits for the jobs it names, is
/// cancelled at once after one that was rejected, and only existing jobs
/// can be named.
@Suite struct AfterSubmitTests {
    @Test func submitAfterAPendingJobWaitsAndAfterARejectedOneIsCancelled() async throws {
        let sandbox = try Sandbox()
        let pending = try await sandbox.seed(.pending)
        let rejected = try await sandbox.seed(.rejected)
        let waiting = try await sandbox.jobctl(["submit", "hello", "--after", "\(pending)", "--json"])
        #expect(waiting.status == 0, "\(waiting)")
        let id = try #require(try waiting.json()["id"] as? Int)
        #expect(try waiting.json()["after"] as? [Int] == [Int(pending)])
        #expect(try await sandbox.job(Int64(id)).job.waitingOn == 1)
        let status = try await sandbox.jobctl(["status", "\(id)"])
        #expect(status.out.contains("waiting"), "\(status.out)")

        let cancelled = try await sandbox.jobctl(["submit", "hello", "--after", "\(pending),\(rejected)"])
        #expect(cancelled.status == 0, "\(cancelled)")
        let second = try #require(Int64(cancelled.out.trimmingCharacters(in: .whitespacesAndNewlines)))
        let job = try await sandbox.job(second).job
        #expect(job.state == .cancelled)
        #expect(job.error == "cancelled: job \(rejected), which it runs after, was rejected")

        let before = try await sandbox.jobCount()
        let unknown = try await sandbox.jobctl(["submit", "hello", "--after", "999999"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("no job 999999"), "\(unknown.stderr)")
        #expect(try await sandbox.jobCount() == before, "nothing written")
        let alone = try await sandbox.jobctl(["submit", "hello", "--after-any-end"])
        #expect(alone.status != 0 && alone.stderr.contains("--after-any-end applies to --after"), "\(alone.stderr)")
    }
}
