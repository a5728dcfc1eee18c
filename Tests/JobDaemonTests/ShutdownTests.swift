import Foundation
import JobConfig
import JobControl
import JobStore
import JobStoreSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM drains: nothing new starts, a running stage finishes within the
/// grace (or its process group is ended after it), the job stays resumable,
/// and jobd exits 0.
@Suite struct ShutdownTests {
    @Test func aRunningStageFinishesAndTheJobResumesAtTheNextStart() async throws {
        let harness = try DaemonHarness(definitions: [
            "two-step": """
            pipeline:
              - then: slow
                shell: 'echo ran >> "$MARKS/slow"; touch "$MARKS/started"; while [ ! -e "$MARKS/go" ]; do sleep 0.02; done; echo first'
              - then: second
                shell: 'echo ran >> "$MARKS/second"; cat; echo second'
            """
        ])
        // The grace outlasts however late the test's awaits resume under
        // load: the stage ends when the test says so, after the drain began.
        let config = try String(contentsOfFile: harness.configPath, encoding: .utf8)
        try harness.write(
            config.replacingOccurrences(of: "shutdown-grace: 10s", with: "shutdown-grace: 600s"), to: "jobd.yaml")
        let marks = harness.folder + "/marks"
        try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true)
        try harness.start(environment: ["MARKS": marks])
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        let id = try await harness.submit("two-step", to: store)
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: marks + "/started"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        harness.signal(SIGTERM)
        // The stage ends only once jobd is draining, whatever the machine's load.
        #expect(await harness.waitForLog("draining: running stages have"))
        #expect(FileManager.default.createFile(atPath: marks + "/go", contents: nil))
        #expect(await harness.exitStatus() == 0)
        let parked = try #require(try await store.job(id))
        #expect(!parked.job.state.isResolved, "the job stays resumable")
        #expect(parked.stages[0].state == .fulfilled, "the running stage finished within the grace")
        #expect(parked.stages[1].state == .pending, "nothing new starts while draining")
        #expect(harness.read("marks/second").isEmpty)

        try harness.start(environment: ["MARKS": marks])
        let detail = try await harness.resolved(id, in: store)
        #expect(detail.job.state == .fulfilled)
        #expect(detail.job.result == Data("first\nsecond\n".utf8))
        #expect(harness.read("marks/slow") == "ran\n", "the fulfilled stage did not run again")
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        try await store.close()
    }

    @Test func afterTheGraceTheProcessGroupIsEndedAndJobdExits() async throws {
        let harness = try DaemonHarness(
            yaml: "",
            definitions: [
                "stuck": "pipeline:\n  - then: forever\n    shell: 'echo $$ > \"$MARKS/pid\"; sleep 600'\n"
            ])
        var config = try String(contentsOfFile: harness.configPath, encoding: .utf8)
        config = config.replacingOccurrences(of: "shutdown-grace: 10s", with: "shutdown-grace: 300ms")
        try harness.write(config, to: "jobd.yaml")
        let marks = harness.folder + "/marks"
        try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true)
        try harness.start(environment: ["MARKS": marks])
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        let id = try await harness.submit("stuck", to: store)
        let deadline = ContinuousClock.now + .seconds(20)
        while Int32(harness.read("marks/pid").trimmingCharacters(in: .whitespacesAndNewlines)) == nil,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(10))
        }
        let child = try #require(Int32(harness.read("marks/pid").trimmingCharacters(in: .whitespacesAndNewlines)))
        let stoppedAt = ContinuousClock.now
        harness.signal(SIGTERM)
        // Grace 300 ms + kill grace 1 s; far below the 600 s sleep. (The
        // bound is loose: the test's clock runs late while other tests hold
        // the cooperative pool.)
        #expect(await harness.exitStatus(within: .seconds(120)) == 0)
        #expect(ContinuousClock.now - stoppedAt < .seconds(120))
        var gone = false
        let reaped = ContinuousClock.now + .seconds(5)
        while !gone, ContinuousClock.now < reaped {
            gone = kill(-child, 0) != 0
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(gone, "the stage's process group is gone")
        let job = try #require(try await store.job(id))
        #expect(!job.job.state.isResolved, "left resumable, not failed")
        try await store.close()
    }

    @Test func aSignalDuringStartupStillStopsItCleanly() async throws {
        let harness = try DaemonHarness(definitions: [:])
        try harness.start()
        // As soon as main catches the signal (before that, SIGTERM's
        // default action would end it, which proves nothing), and before
        // the database is open or the socket bound.
        let deadline = ContinuousClock.now + .seconds(10)
        while !catchesSIGTERM(harness.pid), ContinuousClock.now < deadline { usleep(200) }
        #expect(!FileManager.default.fileExists(atPath: harness.socketPath))
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus(within: .seconds(20)) == 0)
        #expect(!FileManager.default.fileExists(atPath: harness.socketPath))
    }
}

/// Whether process `pid` has SIGTERM in its blocked mask (/proc/PID/status SigBlk).
func catchesSIGTERM(_ pid: Int32) -> Bool {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
        let mask = UInt64(line.split(separator: "\t").last ?? "", radix: 16)
    else { return false }
    return mask & (1 << (UInt64(SIGTERM) - 1)) != 0
}
