import Foundation
import JobConfig
import JobConfigStore
import JobControl
import JobStore
import JobStoreSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP: a good new configuration applies; a broken one is refused with
/// every problem logged, and the old one keeps running.
@Suite struct ReloadTests {
    static let upper = "pipeline:\n  - map: shout\n    transform: upper\n"

    @Test func aReloadAppliesNewDefinitionsAndLogLevel() async throws {
        let harness = try DaemonHarness(definitions: ["shout": Self.upper])
        try harness.start()
        let ready = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()

        try harness.write("pipeline:\n  - map: whisper\n    transform: lower\n", to: "jobs.d/whisper.yaml")
        // Quieter logs from now on: `debug` lines (like "parked"/claims) stop.
        var config = try String(contentsOfFile: harness.configPath, encoding: .utf8)
        config = config.replacingOccurrences(of: "log: { level: debug }", with: "log: { level: warning }")
            // A new socket takes a restart: refused with a warning, the old one kept.
            .replacingOccurrences(of: "socket: state/jobd.sock", with: "socket: state/other.sock")
        try harness.write(config, to: "jobd.yaml")
        harness.signal(SIGHUP)
        let reloading = try #require(await harness.notify.waitFor("RELOADING", "1", from: ready + 1))
        _ = try #require(await harness.notify.waitFor("READY", "1", from: reloading + 1))
        #expect(harness.log.contains("reloaded: 2 definition(s) (shout, whisper)"))
        #expect(harness.log.contains("`socket` changed: that takes a restart; this jobd keeps \(harness.socketPath)"))
        #expect(try ControlClient.status(socketPath: harness.socketPath)?.pid == harness.pid)

        let id = try await harness.submit("whisper", input: "QUIET", to: store)
        let detail = try await harness.resolved(id, in: store)
        #expect(detail.job.state == .fulfilled)
        #expect(detail.job.result == Data("quiet".utf8))

        let linesBefore = harness.log.split(separator: "\n").count
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        // At `warning`, the notices of stopping are not written.
        #expect(harness.log.split(separator: "\n").count == linesBefore, "\(harness.log)")
        try await store.close()
    }

    @Test func aBrokenReloadIsRefusedAndTheOldConfigurationRuns() async throws {
        let harness = try DaemonHarness(definitions: ["shout": Self.upper])
        try harness.start()
        let ready = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()

        // Two problems in two files; both must be reported.
        try harness.write("pipeline:\n  - map: shout\n    transform: upper\n    colour: red\n", to: "jobs.d/shout.yaml")
        try harness.write("pipeline: []\n", to: "jobs.d/empty.yaml")
        harness.signal(SIGHUP)
        let reloading = try #require(await harness.notify.waitFor("RELOADING", "1", from: ready + 1))
        _ = try #require(await harness.notify.waitFor("READY", "1", from: reloading + 1))
        #expect(await harness.waitForLog("reload refused"))
        let log = harness.log
        #expect(log.contains("jobs.d/shout.yaml:4"), "the unknown key, with its line: \(log)")
        #expect(log.contains("colour"))
        #expect(log.contains("jobs.d/empty.yaml:1"), "the empty pipeline, with its line")

        // The definition in memory is still the old, valid one.
        let id = try await store.submit(
            DefinitionLoader().parse(yaml: Self.upper, path: "shout.yaml").get().newJob(input: Data("still".utf8))
        ).id
        _ = try? ControlClient.send(ControlRequest(.nudge), to: harness.socketPath)
        let detail = try await harness.resolved(id, in: store)
        #expect(detail.job.state == .fulfilled)
        #expect(detail.job.result == Data("STILL".utf8))
        #expect(try ControlClient.status(socketPath: harness.socketPath) != nil, "still running")

        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        try await store.close()
    }
}
