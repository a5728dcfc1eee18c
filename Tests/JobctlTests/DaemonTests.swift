import Foundation
import JobConfig
import JobControl
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `jobctl daemon` (alias `ping`): is jobd running?
@Suite struct DaemonTests {
    @Test func reportsARunningJobd() async throws {
        let sandbox = try Sandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        defer { daemon.stop() }
        let result = try await sandbox.jobctl(["daemon"])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.outLines == [
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

    /// A connection to `path` that sends `bytes` (nothing by default) and
    /// then waits; the caller closes it.
    func connect(_ path: String, sending bytes: [UInt8] = []) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard let address = UnixSocketAddress(path: path),
            address.withSocketAddress({ Glibc.connect(fd, $0, $1) }) == 0
        else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        if !bytes.isEmpty { _ = send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    /// While jobd serves as many connections as it may, another client is
    /// told so (the reply jobd wrote before closing), not "Broken pipe".
    @Test func aClientPastTheConnectionLimitIsToldWhy() async throws {
        let sandbox = try Sandbox()
        // Each held connection asks for metrics, which are slow to come:
        // it counts against the limit until answered, past the 2 s a
        // connection has to send its request (and past this test's end,
        // however long a loaded machine makes it).
        let daemon = try FakeDaemon(path: sandbox.socketPath, metricsDelay: .seconds(600))
        defer { daemon.stop() }
        let request = Array(#"{"command":"metrics"}"#.utf8) + [UInt8(ascii: "\n")]
        let held = try (0..<ControlServer.maxConnections).map { _ in try connect(sandbox.socketPath, sending: request) }
        defer { held.forEach { close($0) } }
        let deadline = ContinuousClock.now + .seconds(30)
        while daemon.received.count < ControlServer.maxConnections, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        // Each of a few tries: whether jobd closes before or after jobctl
        // has sent its request is a race.
        for _ in 0..<3 {
            let result = try await sandbox.jobctl(["daemon"])
            #expect(result.status != 0)
            #expect(
                result.stderr.contains(
                    "jobd is serving \(ControlServer.maxConnections) control connections; try again"), "\(result)")
        }
    }

    /// A request whose client shuts its end down instead of ending the line
    /// is answered: the end of the connection ends the request.
    @Test func aRequestEndedByEndOfFileIsAnswered() throws {
        let sandbox = try Sandbox()
        let daemon = try FakeDaemon(path: sandbox.socketPath)
        defer { daemon.stop() }
        let fd = try connect(sandbox.socketPath, sending: Array(#"{"command":"status"}"#.utf8))
        defer { close(fd) }
        #expect(shutdown(fd, Int32(SHUT_WR)) == 0)
        let line = try ControlSocket.readLine(from: fd, deadline: .now + .seconds(5))
        let reply = try ControlCoding.decodeLine(ControlReply.self, from: line)
        #expect(reply.ok && reply.status?.pid == 4242, "\(reply)")
    }

    /// `jobctl metrics` reads an exposition over the 16 MiB of other
    /// replies, from a jobd that takes longer than the 2 s other commands
    /// wait (10,000 definitions make ~20 MB in 2.5–4 s).
    @Test func metricsTakesALargeSlowExposition() async throws {
        let sandbox = try Sandbox()
        let line = "jobd_stage_duration_seconds_bucket{definition=\"d\",kind=\"then\",le=\"0.005\"} 1\n"
        let exposition = String(repeating: line, count: (17 << 20) / line.utf8.count + 1)
        let daemon = try FakeDaemon(path: sandbox.socketPath, metrics: exposition, metricsDelay: .milliseconds(2_500))
        defer { daemon.stop() }
        let result = try await sandbox.jobctl(["metrics"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.out.utf8.count == exposition.utf8.count && result.out == exposition)
    }
}
