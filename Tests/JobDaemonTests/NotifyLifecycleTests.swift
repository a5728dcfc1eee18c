import Foundation
import JobConfig
import JobConfigStore
import JobControl
import JobDaemon
import JobStore
import JobStoreSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What systemd sees of jobd: READY only once the database is open and the
/// socket listens, STATUS, RELOADING→READY around a SIGHUP, STOPPING, and
/// WATCHDOG when asked for.
@Suite struct NotifyLifecycleTests {
    static let echo = """
        pipeline:
          - then: copy
            run: [cat]
          - map: shout
            transform: upper
        """

    @Test func readyStatusReloadingAndStoppingInOrder() async throws {
        let harness = try DaemonHarness(definitions: ["echo": Self.echo])
        try harness.start()
        let ready = try #require(await harness.notify.waitFor("READY", "1"))
        // At READY the database exists and the socket answers.
        #expect(FileManager.default.fileExists(atPath: harness.databasePath))
        let status = try #require(try ControlClient.status(socketPath: harness.socketPath))
        #expect(status.pid == harness.pid)
        #expect(status.version == JobdVersion.string)
        #expect(harness.notify.all[ready]["STATUS"]?.contains("0 pending") == true)

        // STATUS follows the work: a job parked for an hour shows as pending.
        let store = try harness.openStore()
        _ = try await store.submit(try harness.definition("echo").newJob(runAt: Date() + 3600))
        #expect(await harness.notify.waitFor("STATUS", "0 running, 1 pending", from: ready + 1) != nil)

        harness.signal(SIGHUP)
        let reloading = try #require(await harness.notify.waitFor("RELOADING", "1", from: ready + 1))
        let monotonic = try #require(harness.notify.all[reloading]["MONOTONIC_USEC"].flatMap(UInt64.init))
        #expect(monotonic > 0 && monotonic <= SystemdNotifier.monotonicMicroseconds())
        #expect(await harness.notify.waitFor("READY", "1", from: reloading + 1) != nil)

        harness.signal(SIGTERM)
        #expect(await harness.notify.waitFor("STOPPING", "1", from: reloading + 1) != nil)
        #expect(await harness.exitStatus() == 0)
        #expect(!FileManager.default.fileExists(atPath: harness.socketPath), "the socket is removed at exit")
        try await store.close()
    }

    @Test func watchdogPingsAtHalfTheInterval() async throws {
        let harness = try DaemonHarness(definitions: ["echo": Self.echo])
        try harness.start(environment: ["WATCHDOG_USEC": "400000"])
        let ready = try #require(await harness.notify.waitFor("READY", "1"))
        try await Task.sleep(for: .milliseconds(1500))
        let pings = harness.notify.all[ready...].filter { $0["WATCHDOG"] == "1" }.count
        // Every 200 ms for 1.5 s: about 7; a loaded machine may lose a few.
        #expect(pings >= 3)
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
    }

    @Test func noWatchdogForAnotherProcess() async throws {
        let harness = try DaemonHarness(definitions: ["echo": Self.echo])
        try harness.start(environment: ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"])
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        try await Task.sleep(for: .milliseconds(800))
        #expect(!harness.notify.all.contains { $0["WATCHDOG"] != nil })
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
    }

    @Test func aSubmittedJobRunsAtOnceWhenNudgedAndOnlyThen() async throws {
        // A poll interval far beyond the test's patience: only the nudge can start a job.
        let harness = try DaemonHarness(yaml: "poll-interval: 1h", definitions: ["echo": Self.echo])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        // jobd claims once as it starts (after its recovery pass); let that
        // pass, so that only a nudge can start what comes next.
        try await Task.sleep(for: .seconds(1))
        let quiet = try await harness.submit("echo", input: "unheard", to: store, nudge: false)
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await store.job(quiet)?.job.state == .pending, "without a nudge, it waits for the hourly poll")

        let id = try await harness.submit("echo", input: "hello", to: store)
        let detail = try await harness.resolved(id, in: store, within: .seconds(10))
        #expect(detail.job.state == .fulfilled)
        #expect(detail.job.result == Data("HELLO".utf8))
        harness.signal(SIGINT)
        #expect(await harness.exitStatus() == 0)
        try await store.close()
    }
}
