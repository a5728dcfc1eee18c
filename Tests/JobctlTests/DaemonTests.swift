import Foundation
import JobConfig
import JobControl
import Testing

/// `jobctl daemon` (alias `ping`): is jobd running?
@Suite struct DaemonTests {
    @Test func reportsARunningJobd() async throws {
        let sandbox = try Sandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        defer { daemon.stop() }
        let result = try await sandbox.jobctl(["daemon"])
        #expect(result.status == 0, "\(result)")
        #expect(result.outLines == [
            "jobd \(JobdVersion.string) is running: pid 4242, since 2026-11-21T08:00:00.000Z",
            "  jobs    1 running, 7 pending",
            "  pools   default 1/4, slow 0/1",
            "  config  /etc/jobd/jobd.yaml",
        ])
        #expect(daemon.received == [.status])
    }

    @Test func pingIsTheSameWithJSON() async throws {
        let sandbox = try Sandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        defer { daemon.stop() }
        let json = try await sandbox.jobctl(["ping", "--json"]).json()
        #expect(json["running"] as? Bool == true)
        #expect(json["pid"] as? Int == 4242)
        #expect(json["version"] as? String == JobdVersion.string)
        #expect(json["jobs_running"] as? Int == 1)
        #expect(json["jobs_pending"] as? Int == 7)
        #expect((json["pools"] as? [String: Int]) == ["default": 1, "slow": 0])
        #expect(json["socket"] as? String == sandbox.socketPath)
    }

    @Test func exits69WhenJobdIsNotRunning() async throws {
        let sandbox = try Sandbox()
        let text = try await sandbox.jobctl(["daemon"])
        #expect(text.status == 69, "\(text)")
        #expect(text.out.isEmpty)
        #expect(text.errLines == ["jobctl: error: jobd is not running (nothing listens on \(sandbox.socketPath))"])
        let json = try await sandbox.jobctl(["daemon", "--json"])
        #expect(json.status == 69)
        let object = try json.json()
        #expect(object["running"] as? Bool == false)
        #expect(object["error"] == nil, "the answer is the object itself")
    }

    @Test func aStaleSocketFileMeansNotRunning() async throws {
        let sandbox = try Sandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        daemon.stop()
        // A socket file that nobody listens on, as a killed jobd leaves it.
        #expect(FileManager.default.createFile(atPath: sandbox.socketPath, contents: nil))
        let result = try await sandbox.jobctl(["daemon"])
        #expect(result.status == 69, "\(result)")
    }
}
