import Foundation
import JobControl
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `jobctl cancel` of a job jobd runs on SQLite: jobctl tells jobd over the
/// control socket, and the job stops then, not at the next lease renewal.
@Suite struct CancelDaemonTests {
    @Test func aRunningJobStopsWhenJobctlCancelsIt() async throws {
        // A lease of an hour is renewed every ten minutes: only jobctl's
        // word can stop the job within the bound below.
        let harness = try DaemonHarness(
            yaml: "lease: 1h",
            definitions: [
                "hold":
                    "pipeline:\n  - then: nap\n    run: [sleep, \"600\"]\n  - finally: note\n    run: [echo, noted]\n"
            ])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        let id = try await harness.submit("hold", to: store)
        let deadline = ContinuousClock.now + .seconds(60)
        while try await store.job(id)?.stages.first?.state != .running, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let asked = Date()
        let said = try await runCommand(builtProduct("jobctl"), ["cancel", String(id), "--config", harness.configPath])
        #expect(said.status == 0, "\(said)")
        #expect(said.output.hasPrefix("job \(id) is running") && said.output.contains("jobd was asked to stop it"))
        let detail = try await harness.resolved(id, in: store, within: .seconds(120))
        #expect(detail.job.state == .cancelled)
        #expect(detail.stages.last?.state == .fulfilled, "the finally stage ran")
        // By the end jobd stamped; a renewal would have come ten minutes on.
        let took = try #require(detail.job.finishedAt).timeIntervalSince(asked)
        #expect(took < 60, "stopped when jobctl said so, not at a renewal: \(took) s")
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        try await store.close()
    }

    /// `cancel` over the socket names a job that exists: no job, a job of
    /// null, 0, −1 or an id nobody has get an error that says so; a real
    /// job gets ok.
    @Test func cancelOverTheSocketNeedsAJobThatExists() async throws {
        let harness = try DaemonHarness(definitions: ["echo": "pipeline:\n  - then: echo\n    run: [cat]\n"])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        let id = try await harness.submit("echo", input: "x", to: store)
        func ask(_ request: String) throws -> ControlReply {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(fd) }
            guard let address = UnixSocketAddress(path: harness.socketPath),
                address.withSocketAddress({ connect(fd, $0, $1) }) == 0
            else { throw POSIXError(.ECONNREFUSED) }
            try ControlSocket.sendAll(Data((request + "\n").utf8), to: fd, deadline: .now + .seconds(5))
            return try ControlCoding.decodeLine(
                ControlReply.self, from: ControlSocket.readLine(from: fd, deadline: .now + .seconds(5)))
        }
        for (request, reason) in [
            (#"{"command":"cancel"}"#, "cancel needs \"job\": the id of a job, a positive integer,"),
            (#"{"command":"cancel","job":null}"#, "cancel needs \"job\": the id of a job, a positive integer,"),
            (#"{"command":"cancel","job":0}"#, "a positive integer (got 0)"),
            (#"{"command":"cancel","job":-1}"#, "a positive integer (got -1)"),
            (#"{"command":"cancel","job":999999}"#, "there is no job 999999"),
        ] {
            let reply = try ask(request)
            #expect(!reply.ok && reply.error?.contains(reason) == true, "\(request): \(reply)")
        }
        #expect(try ask(#"{"command":"cancel","job":\#(id)}"#).ok)
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        try await store.close()
    }
}
