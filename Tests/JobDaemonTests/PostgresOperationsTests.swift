import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
@_spi(Maintenance) import JobStoreSQLite
import Spawn
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// jobd and jobctl on PostgreSQL when the database misbehaves: a locked
/// row or table, a server restart, a server gone during a stop, a leader
/// that dies, a schema that does not exist.
@Suite(.serialized) struct PostgresOperationsTests {
    typealias Cluster = SeveralHostsDaemonTests.Cluster

    static let definitions = [
        "hold": "pipeline:\n  - then: hold\n    run: [sleep, '60']\n",
        "slow": "pipeline:\n  - then: nap\n    run: [sh, -c, 'sleep 6; cat']\n",
        "two-steps":
            "pipeline:\n  - then: first\n    run: [sh, -c, 'sleep 1; cat']\n  - then: second\n    run: [cat]\n",
    ]

    /// jobctl gives up on a lock after 10 s with exit 75, as on SQLite's busy timeout.
    @Test(.timeLimit(.minutes(4)))
    func jobctlGivesUpOnALockedRowOrTableWithExit75() async throws {
        let cluster = try await Cluster(hosts: 0)
        defer { cluster.tearDown() }
        // The schema, as a jobd makes it at its start.
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        let id = try #require(
            Int64(
                try await cluster.jobctl(["submit", "work", "--input", "1"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        let jobctl = builtProduct("jobctl")

        let row = try cluster.server.holdLocks(
            "SELECT id FROM jobd.jobs WHERE id = \(id) FOR UPDATE", name: "row_locker")
        defer { _ = row.stop(grace: .seconds(1)) }
        try await Task.sleep(for: .seconds(1))
        let cancel = try await Self.run(jobctl, ["cancel", String(id), "--config", cluster.client.configPath])
        #expect(cancel.status == 75, "\(cancel)")
        #expect(cancel.error.contains("lock"), "\(cancel.error)")
        try await cluster.server.releaseLocks(of: "row_locker")

        let table = try cluster.server.holdLocks("LOCK TABLE jobd.jobs IN ACCESS EXCLUSIVE MODE", name: "table_locker")
        defer { _ = table.stop(grace: .seconds(1)) }
        try await Task.sleep(for: .seconds(1))
        let list = try await Self.run(jobctl, ["list", "--limit", "1", "--config", cluster.client.configPath])
        #expect(list.status == 75, "\(list)")
        try await cluster.server.releaseLocks(of: "table_locker")
        // Nothing was cancelled.
        #expect(try await cluster.jobctl(["status", String(id)]).contains("pending"))
        await store.close()
    }

    /// jobctl never creates or upgrades the schema: a `schema=` typo is
    /// exit 74, like a missing SQLite file, and leaves nothing behind.
    @Test func jobctlRefusesASchemaJobdNeverMade() async throws {
        let cluster = try await Cluster(hosts: 0)
        defer { cluster.tearDown() }
        let typo = try DaemonHarness(
            yaml: "node: client", definitions: ["work": SeveralHostsDaemonTests.work],
            database: cluster.url + "&schema=jbod")
        for arguments in [["submit", "work", "--input", "lost"], ["list"]] {
            let result = try await runCommand(builtProduct("jobctl"), arguments + ["--config", typo.configPath])
            #expect(result.status == 74, "\(result)")
            #expect(result.error.contains("schema jbod") && result.error.contains("start jobd"), "\(result.error)")
            #expect(result.output.isEmpty, "\(result.output)")
        }
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        #expect(try await store.queryStrings("SELECT nspname FROM pg_namespace WHERE nspname = 'jbod'").isEmpty)
        await store.close()
    }

    /// `jobctl wait` rides out a restart of the server (its reads fail for
    /// a while: 57P01 as the server stops, then no connection for longer
    /// than a call waits for one), and exits with the job's outcome.
    @Test(.timeLimit(.minutes(3)))
    func waitRidesOutAServerRestart() async throws {
        let cluster = try await Cluster(hosts: 1, definitions: Self.definitions)
        defer { cluster.tearDown() }
        let host = cluster.hosts[0]
        try host.start()
        _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        let id = try #require(
            Int64(
                try await cluster.jobctl(["submit", "slow", "--input", "done"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        let output = cluster.client.folder + "/wait.out"
        let waiter = try SpawnedProcess(
            builtProduct("jobctl"), ["wait", String(id), "--config", cluster.client.configPath],
            stdout: .file(output), stderr: .file(output + ".err"))
        try await Task.sleep(for: .seconds(1))
        await cluster.server.shutDown()
        try await Task.sleep(for: .seconds(12))
        try await cluster.server.start()
        let exit = await waiter.waitForExit(within: .seconds(120))
        let error = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        #expect(exit?.status == 0, "\(String(describing: exit)): \(error)")
        #expect((try? String(contentsOfFile: output, encoding: .utf8)) == "done")
        host.signal(SIGTERM)
        #expect(await host.exitStatus() == 0, "\(host.log)")
    }

    /// `jobctl wait` started while the server is down waits it out as a
    /// wait under way does (it used to exit 75 at once), then gives the
    /// job's outcome.
    @Test(.timeLimit(.minutes(3)))
    func waitStartedWhileTheServerIsDownRidesOutTheOutage() async throws {
        let cluster = try await Cluster(hosts: 0, definitions: Self.definitions)
        defer { cluster.tearDown() }
        let (store, running) = try await cluster.openStore()
        let id = try #require(
            Int64(
                try await cluster.jobctl(["submit", "slow", "--input", "x"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        let lease = try #require(
            try await store.claim(pool: "default", owner: "test", limit: 1, leaseDuration: .seconds(600)).first
        ).lease
        try await store.finish(JobFinish(lease: lease, outcome: .fulfilled(Data("done".utf8))))
        running.cancel()
        await store.close()
        await cluster.server.shutDown()
        let output = cluster.client.folder + "/wait.out"
        let started = ContinuousClock.now
        let waiter = try SpawnedProcess(
            builtProduct("jobctl"), ["wait", String(id), "--config", cluster.client.configPath],
            stdout: .file(output), stderr: .file(output + ".err"))
        try await Task.sleep(for: .seconds(3))
        try await cluster.server.start()
        let exit = await waiter.waitForExit(within: .seconds(60))
        let error = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        #expect(exit?.status == 0, "\(String(describing: exit)): \(error)")
        #expect(ContinuousClock.now - started >= .seconds(3))
        #expect((try? String(contentsOfFile: output, encoding: .utf8)) == "done")
    }

    /// SIGTERM with the server down: the drain starts at once, and jobd
    /// stops within the grace and a few seconds, saying what was not
    /// written (the first stage ends during the grace; its result cannot be).
    @Test(.timeLimit(.minutes(3)))
    func aStopWithTheServerDownEndsWithinTheGrace() async throws {
        let cluster = try await Cluster(
            hosts: 1, hostYAML: "shutdown-grace: 4s\nkill-grace: 1s\n", definitions: Self.definitions)
        defer { cluster.tearDown() }
        let host = cluster.hosts[0]
        try host.start()
        _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        let id = try #require(
            Int64(try await cluster.jobctl(["submit", "two-steps"]).trimmingCharacters(in: .whitespacesAndNewlines)))
        let (store, running) = try await cluster.openStore()
        try await Self.waitUntil(.seconds(30)) { try await store.job(id)?.job.state == .running }
        running.cancel()
        await cluster.server.kill()
        host.signal(SIGTERM)
        #expect(await host.exitStatus(within: .seconds(120)) == 0, "\(host.log)")
        // By jobd's own clock: 4 s of grace, 1 s of kill grace, 3 s for the
        // last writes, 2 s to let the leader lease go. Before: 20 s and more
        // (each call to the database waited its 10 s, the drain began last).
        let log = host.log
        let stamps = try Self.stamps(of: ["SIGTERM: stopping", "notice stopped"], in: log)
        #expect(stamps[1].timeIntervalSince(stamps[0]) < 15, "\(log)")
        #expect(log.contains("run again at the next start"), "\(log)")
    }

    /// A leader that dies hands its role on once its lease (`lease: 3s`)
    /// ran out, not after a fixed 30 s: its jobs are requeued as fast as
    /// any dead host's.
    @Test(.timeLimit(.minutes(3)))
    func theJobsOfALeaderThatDiesAreTakenOverAfterTheLease() async throws {
        let cluster = try await Cluster(hosts: 2, definitions: Self.definitions)
        defer { cluster.tearDown() }
        for host in cluster.hosts { try host.start() }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        var leader = ""
        try await Self.waitUntil(.seconds(30)) {
            leader =
                try await store.queryStrings("SELECT owner FROM leaders WHERE role = 'maintenance'").first?.flatMap {
                    $0
                } ?? ""
            return !leader.isEmpty
        }
        let node = String(leader.split(separator: "/").first ?? "")
        let index = try #require(cluster.hosts.firstIndex { $0.read("jobd.yaml").contains("node: \(node)\n") })
        _ = try await cluster.jobctl(
            ["submit", "hold"], stdin: (1...8).map(String.init).joined(separator: "\n") + "\n")
        var onLeader: [Int64] = []
        try await Self.waitUntil(.seconds(30)) {
            onLeader = try await store.list(JobQuery(states: [.running], limit: 100)).jobs
                .filter { $0.leaseOwner == leader }.map(\.id)
            return !onLeader.isEmpty
        }
        let killed = Date()
        cluster.hosts[index].signal(SIGKILL)
        try await Self.waitUntil(.seconds(90)) {
            try await store.events(of: onLeader[0]).contains { $0.kind == "requeued" }
        }
        let requeued = try #require(try await store.events(of: onLeader[0]).first { $0.kind == "requeued" })
        // By the store's clock; the test's `killed` is no later than the kill. Before: 30 s at least.
        #expect(requeued.createdAt.timeIntervalSince(killed) < 20, "\(requeued)")
        for host in cluster.hosts where host.pid != cluster.hosts[index].pid { host.signal(SIGTERM) }
        await store.close()
    }

    // MARK: Helpers

    /// Runs `path` with a liveness bound: a hang fails the test instead of holding it.
    static func run(
        _ path: String, _ arguments: [String]
    ) async throws -> (status: Int32, output: String, error: String) {
        let folder = NSTemporaryDirectory() + "jobctl-run-\(UUID().uuidString.prefix(8))"
        defer {
            try? FileManager.default.removeItem(atPath: folder + ".out")
            try? FileManager.default.removeItem(atPath: folder + ".err")
        }
        let process = try SpawnedProcess(
            path, arguments, stdout: .file(folder + ".out"), stderr: .file(folder + ".err"))
        guard let exit = await process.waitForExit(within: .seconds(120)) else {
            _ = process.stop(grace: .seconds(1))
            throw TestFailure("\(path) \(arguments.joined(separator: " ")) did not end within 120 s")
        }
        return (
            exit.status, (try? String(contentsOfFile: folder + ".out", encoding: .utf8)) ?? "",
            (try? String(contentsOfFile: folder + ".err", encoding: .utf8)) ?? ""
        )
    }

    /// The time stamps jobd wrote on its first lines holding each of `texts`, in order.
    static func stamps(of texts: [String], in log: String) throws -> [Date] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return try texts.map { text in
            guard let line = log.split(separator: "\n").first(where: { $0.contains(text) }),
                let stamp = line.split(separator: " ").first, let date = formatter.date(from: String(stamp))
            else { throw TestFailure("no stamped line with \(text) in: \(log)") }
            return date
        }
    }

    static func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("not within \(limit)")
    }
}
