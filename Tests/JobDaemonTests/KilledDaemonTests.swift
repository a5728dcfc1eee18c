import Foundation
import JobConfig
import JobStore
import JobStoreSQLite
import Spawn
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A jobd SIGKILLed outside systemd: its stage processes die with it, and
/// a jobd restarted at once takes its jobs back at once, even while the
/// dead one is a zombie its parent has not reaped.
@Suite struct KilledDaemonTests {
    static let hold = """
        pipeline:
          - then: hold
            run: [sleep, '60']
        """

    @Test(.timeLimit(.minutes(1)))
    func aStageProcessDiesWithItsKilledJobd() async throws {
        let harness = try DaemonHarness(definitions: ["hold": Self.hold])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"), "jobd did not start: \(harness.log)")
        let store = try harness.openStore()
        try await harness.submit("hold", to: store)
        let jobd = harness.pid
        var stage: Int32?
        try await waitUntil(.seconds(10)) {
            stage = Self.children(of: jobd, named: "sleep").first
            return stage != nil
        }
        let child = try #require(stage, "the stage never started: \(harness.log)")
        harness.signal(SIGKILL)
        #expect(await harness.exitStatus() == SIGKILL)
        // Reparented, it would sleep on for a minute; it is gone (or a zombie
        // waiting for its new parent to reap it) within moments.
        try await waitUntil(.seconds(5)) { Self.isGone(child) }
        #expect(Self.isGone(child), "the stage process \(child) outlived its jobd")
    }

    @Test(.timeLimit(.minutes(2)))
    func aRestartTakesBackTheJobsOfItsZombiePredecessorAtOnce() async throws {
        let harness = try DaemonHarness(yaml: "lease: 60s\nshutdown-grace: 1s", definitions: ["hold": Self.hold])
        try FileManager.default.createDirectory(atPath: harness.folder + "/state", withIntermediateDirectories: true)
        let store = try harness.openStore()
        let id = try await harness.submit("hold", to: store, nudge: false)
        // The first jobd's parent is a shell that became `sleep` and never reaps it.
        let parent = try SpawnedProcess(
            "/bin/sh", ["-c", "\"$@\" & exec sleep 120", "sh", jobdPath, "--config", harness.configPath],
            stdout: .null, stderr: .file(harness.folder + "/first.log"))
        defer { parent.signal(SIGKILL) }
        var owner: String?
        try await waitUntil(.seconds(15)) {
            let job = try await store.job(id)?.job
            owner = job?.state == .running ? job?.leaseOwner : nil
            return owner != nil
        }
        let first = try #require(
            owner.flatMap { LeaseOwner(parsing: $0)?.pid }, "the job never ran: \(harness.read("first.log"))")
        #expect(kill(first, SIGKILL) == 0)
        try await waitUntil(.seconds(5)) { Self.state(of: first) == "Z" }
        #expect(Self.state(of: first) == "Z", "the killed jobd is a zombie")

        let restarted = ContinuousClock.now
        try harness.start()
        // Alone it takes well under a second; a loaded machine may take
        // seconds to start a debug jobd. Waiting out the lease takes 60 s.
        try await waitUntil(.seconds(40)) {
            let job = try await store.job(id)?.job
            return job?.state == .running && job?.claims == 2
        }
        let job = try #require(try await store.job(id)?.job)
        #expect(job.claims == 2 && job.state == .running, "not taken back: \(job); \(harness.log)")
        let took = ContinuousClock.now - restarted
        #expect(took < .seconds(40), "taken back long before the 60 s lease ran out")
        if job.claims == 2 { print("zombie predecessor: its job running again \(took) after the restart (lease 60 s)") }
        #expect(harness.log.contains("taking up 1 job(s) of stopped runner(s)"), "\(harness.log)")
        #expect(Self.state(of: first) == "Z", "still a zombie throughout")

        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0, "\(harness.log)")
    }

    /// The pids of `pid`'s children called `name`.
    static func children(of pid: Int32, named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let child = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: open)..<close] == name
            else { return nil }
            let rest = stat[stat.index(after: close)...].split(separator: " ")
            return rest.count > 1 && Int32(rest[1]) == pid ? child : nil
        }
    }

    /// No such process, or a zombie.
    static func isGone(_ pid: Int32) -> Bool {
        let state = Self.state(of: pid)
        return state == nil || state == "Z"
    }

    /// The state letter of `/proc/PID/stat` (`Z`: a zombie), or nil.
    static func state(of pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").first?.first
    }

    func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
