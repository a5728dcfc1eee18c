import Foundation
import JobConfig
import JobControl
import JobStore
import JobStoreSQLite
import Testing

/// `jobctl submit`: one job, a batch, with jobd stopped and running.
@Suite struct SubmitTests {
    @Test func printsTheIdAloneAndQueuesWhileJobdIsStopped() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.jobctl(["submit", "hello", "--input", "world"])
        #expect(result.status == 0, "\(result)")
        let id = try #require(Int64(result.out.trimmingCharacters(in: .newlines)), "\(result)")
        #expect(result.outLines.count == 1)
        #expect(result.errLines == ["jobctl: jobd is not running: job \(id) is queued and will start when jobd runs"])

        let detail = try await sandbox.job(id)
        #expect(detail.job.definition == "hello")
        #expect(detail.job.state == .pending)
        #expect(detail.job.input == Data("world".utf8))
        #expect(detail.stages.map(\.name) == ["greet", "shout", "tidy", "result"])
        #expect(detail.stages.map(\.kind) == ["then", "map", "map", "done"])
    }

    @Test func jsonCarriesTheIdAndWhatJobdWasTold() async throws {
        let sandbox = try Sandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        defer { daemon.stop() }
        let result = try await sandbox.jobctl(["submit", "slow", "--json", "--priority", "5", "--delay", "1h"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "jobd runs: no note expected, got \(result.stderr)")
        let json = try result.json()
        let id = try #require(json["id"] as? Int)
        #expect(json["created"] as? Bool == true)
        #expect(json["definition"] as? String == "slow")
        #expect(json["pool"] as? String == "slow")
        #expect(json["daemon"] as? String == "nudged")
        #expect(daemon.received == [.nudge])

        let job = try await sandbox.job(Int64(id)).job
        #expect(job.priority == 5)
        #expect(job.runAt.timeIntervalSinceNow > 3500 && job.runAt.timeIntervalSinceNow <= 3600)
        #expect(json["run_at"] as? String != nil)
    }

    @Test func readsTheInputFromAFileOrStdin() async throws {
        let sandbox = try Sandbox()
        let bytes = Data([0x00, 0xFF, 0x41, 0x0A])
        try bytes.write(to: URL(fileURLWithPath: sandbox.file("input.bin")))
        let fromFile = try await sandbox.jobctl(["submit", "hello", "--input-file", sandbox.file("input.bin")])
        let fromStdin = try await sandbox.jobctl(["submit", "hello", "--input-file", "-"], stdin: Data("piped\n".utf8))
        #expect(fromFile.status == 0 && fromStdin.status == 0, "\(fromFile)\n\(fromStdin)")

        let first = try #require(Int64(fromFile.out.trimmingCharacters(in: .newlines)))
        let second = try #require(Int64(fromStdin.out.trimmingCharacters(in: .newlines)))
        #expect(try await sandbox.job(first).job.input == bytes)
        #expect(try await sandbox.job(second).job.input == Data("piped\n".utf8))
    }

    @Test func aKeySubmitsOnce() async throws {
        let sandbox = try Sandbox()
        let first = try await sandbox.jobctl(["submit", "hello", "--key", "day-1", "--input", "a"])
        let again = try await sandbox.jobctl(["submit", "hello", "--key", "day-1", "--input", "b", "--json"])
        #expect(first.status == 0 && again.status == 0, "\(first)\n\(again)")
        let json = try again.json()
        #expect(json["id"] as? Int == Int(first.out.trimmingCharacters(in: .newlines)))
        #expect(json["created"] as? Bool == false)
        #expect(again.stderr.contains("already has the key day-1"))
        #expect(try await sandbox.jobCount() == 1)
    }

    @Test func aBatchIsOneJobPerLineInOrder() async throws {
        let sandbox = try Sandbox()
        let lines = (1...250).map { "line \($0)" }
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: sandbox.file("batch.txt"), atomically: true, encoding: .utf8)
        let result = try await sandbox.jobctl(["submit", "hello", "--batch", sandbox.file("batch.txt")])
        #expect(result.status == 0, "\(result)")
        let ids = result.outLines.compactMap { Int64($0) }
        #expect(ids.count == 250)
        #expect(ids == ids.sorted() && Set(ids).count == 250)
        #expect(
            result.errLines == ["jobctl: jobd is not running: the 250 jobs are queued and will start when jobd runs"])

        #expect(try await sandbox.job(ids[0]).job.input == Data("line 1".utf8))
        #expect(try await sandbox.job(ids[249]).job.input == Data("line 250".utf8))

        let fromStdin = try await sandbox.jobctl(
            ["submit", "hello", "--batch", "-", "--json"], stdin: Data("x\ny".utf8))
        let jobs = try #require(try fromStdin.json()["jobs"] as? [[String: Any]], "\(fromStdin)")
        #expect(jobs.count == 2)
        #expect(jobs.allSatisfy { $0["created"] as? Bool == true })
        #expect(try await sandbox.jobCount() == 252)
    }

    @Test func aBatchWithALineOverTheCapWritesNothing() async throws {
        let sandbox = try Sandbox(configExtra: "store: { value-cap: 1KiB }")
        let batch = ["short", String(repeating: "x", count: 1025), "short"].joined(separator: "\n")
        let result = try await sandbox.jobctl(["submit", "hello", "--batch", "-"], stdin: Data(batch.utf8))
        #expect(result.status == 65, "\(result)")
        #expect(result.errLines.count == 1)
        #expect(result.stderr.contains("line 2 of the batch is 1025 bytes, over the value cap of 1024 bytes"))
        #expect(try await sandbox.jobCount() == 0)
    }

    @Test func anEmptyBatchSubmitsNothing() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.jobctl(["submit", "hello", "--batch", "-"], stdin: Data())
        #expect(result.status == 0, "\(result)")
        #expect(result.out.isEmpty)
        #expect(result.stderr.contains("nothing was submitted"))
        #expect(try await sandbox.jobCount() == 0)
    }
}
