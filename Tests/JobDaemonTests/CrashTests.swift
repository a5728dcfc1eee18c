import Foundation
import JobConfig
import JobConfigStore
import JobControl
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGKILL, then a restart: every job ends, and no fulfilled stage runs
/// twice. Two jobds on one database never run one job at once.
@Suite struct CrashTests {
    static let marked = """
        pipeline:
          - then: first
            shell: 'echo "$JOBD_JOB_ID" >> "$MARKS/first"; sleep 0.3; echo one'
          - then: second
            shell: 'echo "$JOBD_JOB_ID" >> "$MARKS/second"; while [ ! -e "$MARKS/go" ]; do sleep 0.02; done; cat'
          - map: shout
            transform: upper
        """

    @Test func aKilledJobdRestartedResumesEveryJob() async throws {
        let harness = try DaemonHarness(yaml: "pools: { default: 4 }", definitions: ["marked": Self.marked])
        let marks = harness.folder + "/marks"
        try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true)
        try harness.start(environment: ["MARKS": marks])
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let store = try harness.openStore()
        var ids: [Int64] = []
        for _ in 0..<8 { ids.append(try await harness.submit("marked", to: store)) }
        // Kill it once some stages have run and others are in flight: a
        // `second` stage waits for the `go` file, made only after the kill.
        let deadline = ContinuousClock.now + .seconds(20)
        while harness.read("marks/second").isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        harness.signal(SIGKILL)
        #expect(await harness.exitStatus() == SIGKILL)
        let before = try await store.countJobs(in: [.running, .pending, .fulfilled])
        #expect((before[.running] ?? 0) > 0, "the kill left jobs running: \(before)")
        let fulfilledBefore = try await stagesFulfilled(ids, store)

        #expect(FileManager.default.createFile(atPath: marks + "/go", contents: nil))
        let restartedAt = Date()
        try harness.start(environment: ["MARKS": marks])
        var lastEnd = restartedAt
        for id in ids {
            let detail = try await harness.resolved(id, in: store)
            #expect(detail.job.state == .fulfilled, "job \(id): \(detail.job.state) \(detail.job.error ?? "")")
            #expect(detail.job.result == Data("ONE\n".utf8))
            lastEnd = max(lastEnd, detail.job.finishedAt ?? .distantFuture)
        }
        // A dead jobd of this host: its leases are ended at once, not after
        // 30 s (by the ends the new jobd stamped, not the test's own clock).
        #expect(lastEnd.timeIntervalSince(restartedAt) < 20)
        #expect(harness.log.contains("taking up"))

        // A stage fulfilled before the kill never ran again.
        let firstRuns = harness.read("marks/first").split(separator: "\n").map { Int64($0)! }
        let secondRuns = harness.read("marks/second").split(separator: "\n").map { Int64($0)! }
        for (id, position) in fulfilledBefore {
            let runs = position == 0 ? firstRuns : secondRuns
            #expect(
                runs.filter { $0 == id }.count == 1, "job \(id) stage \(position) fulfilled before the kill ran again")
        }
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
        try await store.close()
    }

    @Test func twoJobdsOnOneDatabaseNeverRunOneJobTwice() async throws {
        // Each run notes its job and its jobd, then waits (up to 20 s) until
        // a run of the other jobd is noted too, so neither jobd can take
        // every job before the other one has started polling.
        let tick = """
            pipeline:
              - then: note
                shell: 'echo "$JOBD_JOB_ID $PPID" >> "$MARKS/runs"; n=0; while [ "$(cut -d " " -f 2 "$MARKS/runs" | sort -u | wc -l)" -lt 2 ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n+1)); done'
            """
        let one = try DaemonHarness(yaml: "pools: { default: 3 }", definitions: ["tick": tick])
        let marks = one.folder + "/marks"
        try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true)
        // The second jobd: its own folder, socket and notify socket, the first one's database.
        let two = try DaemonHarness(yaml: "pools: { default: 3 }", definitions: [:])
        var config = try String(contentsOfFile: two.configPath, encoding: .utf8)
        config = config.replacingOccurrences(of: "database: state/jobd.sqlite", with: "database: \(one.databasePath)")
            .replacingOccurrences(of: "definitions: jobs.d", with: "definitions: \(one.folder)/jobs.d")
        try two.write(config, to: "jobd.yaml")
        try one.start(environment: ["MARKS": marks])
        _ = try #require(await one.notify.waitFor("READY", "1"))
        try two.start(environment: ["MARKS": marks])
        _ = try #require(await two.notify.waitFor("READY", "1"))

        let store = try one.openStore()
        let definition = try one.definition("tick")
        let ids = try await store.submit((0..<60).map { _ in definition.newJob() }).map(\.id)
        _ = try? ControlClient.send(ControlRequest(.nudge), to: one.socketPath)
        _ = try? ControlClient.send(ControlRequest(.nudge), to: two.socketPath)
        for id in ids { #expect(try await one.resolved(id, in: store).job.state == .fulfilled) }

        let runs = one.read("marks/runs").split(separator: "\n").map { $0.split(separator: " ") }
        #expect(runs.count == ids.count, "each job ran exactly once")
        #expect(Set(runs.map { $0[0] }).count == ids.count)
        let runners = Set(runs.map { $0[1] })
        #expect(runners.count == 2, "both jobds took jobs (pids \(runners))")
        one.signal(SIGTERM)
        two.signal(SIGTERM)
        #expect(await one.exitStatus() == 0)
        #expect(await two.exitStatus() == 0)
        try await store.close()
    }

    @Test func aSecondJobdOnTheSameSocketRefusesToStart() async throws {
        let harness = try DaemonHarness(definitions: [:])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        let result = try await runCommand(jobdPath, ["--config", harness.configPath])
        #expect(result.status == 69)
        #expect(result.error.contains("another jobd (pid \(harness.pid)) already listens on \(harness.socketPath)"))
        #expect(
            try ControlClient.status(socketPath: harness.socketPath)?.pid == harness.pid, "the first one still answers")
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
    }

    /// Which stages (job, position) were fulfilled.
    private func stagesFulfilled(_ ids: [Int64], _ store: SQLiteJobStore) async throws -> [(Int64, Int)] {
        var result: [(Int64, Int)] = []
        for id in ids {
            let detail = try #require(try await store.job(id))
            for stage in detail.stages where stage.state == .fulfilled && stage.position < 2 {
                result.append((id, stage.position))
            }
        }
        return result
    }
}

/// Who may talk to jobd: the socket is 0660 in the database file's group.
@Suite struct SocketPermissionTests {
    @Test func theSocketFollowsTheDatabaseGroup() async throws {
        let harness = try DaemonHarness(definitions: [:])
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1"))
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)

        // Give the database another group (as an installer would: group jobd).
        let group: gid_t = 65534
        #expect(chown(harness.databasePath, uid_t.max, group) == 0)
        let ready = harness.notify.all.count
        try harness.start()
        _ = try #require(await harness.notify.waitFor("READY", "1", from: ready))
        var status = stat()
        #expect(stat(harness.socketPath, &status) == 0)
        #expect(status.st_gid == group)
        #expect(status.st_mode & 0o777 == 0o660)
        #expect((status.st_mode & S_IFMT) == S_IFSOCK)
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0)
    }
}
