import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Unique keys with the real binaries: three jobds on one PostgreSQL,
/// jobctl processes submitting the same keys at once.
@Suite(.serialized) struct UniqueDaemonTests {
    /// A job's key is its input; its stage runs while `$JOBD_TEST_GATE/all`
    /// or `$JOBD_TEST_GATE/KEY` exists (a dot every 0.05 s, so SIGPIPE ends
    /// it once its jobd is gone).
    static let once = """
        unique: { key: input }
        pipeline:
          - then: work
            run: [sh, -c, 'read k; while [ -e "$JOBD_TEST_GATE/all" ] || [ -e "$JOBD_TEST_GATE/$k" ]; do printf .; sleep 0.05; done; echo "$k"']
        """

    /// How many jobctl processes submit at once, and how many keys each
    /// submits (in an order of its own); `JOBD_TEST_UNIQUE_SUBMITTERS` and
    /// `JOBD_TEST_UNIQUE_KEYS` set them for a run by hand.
    static let submitters = Int(ProcessInfo.processInfo.environment["JOBD_TEST_UNIQUE_SUBMITTERS"] ?? "") ?? 8
    static let keys = Int(ProcessInfo.processInfo.environment["JOBD_TEST_UNIQUE_KEYS"] ?? "") ?? 20

    /// Concurrent submitters make one live job per key, every other submit
    /// reporting a duplicate; once a job ends its key makes a new job; a key
    /// held by a SIGKILLed host (the others stopped, so that none takes its
    /// job over) frees when its lease (3 s) expires, and the old job is
    /// cancelled rather than run again beside the new one.
    @Test(.timeLimit(.minutes(2)))
    func oneJobPerKeyAcrossHostsAndAKilledHostsKeyFrees() async throws {
        let cluster = try await SeveralHostsDaemonTests.Cluster(
            hosts: 3, definitions: ["once": Self.once], sharingTheServer: true)
        defer { cluster.tearDown() }
        let gate = cluster.client.folder + "/gate"
        try FileManager.default.createDirectory(atPath: gate, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: gate + "/all"))
        for host in cluster.hosts { try host.start(environment: ["JOBD_TEST_GATE": gate]) }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }

        // Every submitter sends every key, each in an order of its own.
        let keys = (0..<Self.keys).map { "key-\($0)" }
        var files: [String] = []
        for index in 0..<Self.submitters {
            let file = cluster.client.folder + "/batch-\(index)"
            var generator = SeededGenerator(seed: UInt64(index + 1))
            try (keys.shuffled(using: &generator).joined(separator: "\n") + "\n")
                .write(toFile: file, atomically: true, encoding: .utf8)
            files.append(file)
        }
        let clock = ContinuousClock()
        let began = clock.now
        let results = try await withThrowingTaskGroup(of: (String, (status: Int32, output: String, error: String)).self)
        { group in
            for file in files {
                group.addTask {
                    (
                        file,
                        try await runCommand(
                            builtProduct("jobctl"),
                            ["submit", "once", "--batch", file, "--json", "--config", cluster.client.configPath])
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let took = clock.now - began
        var byKey: [String: [(id: Int64, created: Bool, duplicate: Bool)]] = [:]
        for (file, result) in results {
            #expect(result.status == 0, "jobctl exited \(result.status): \(result.error)")
            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
            let document = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            let items = try #require(document?["jobs"] as? [[String: Any]], "\(result.output)")
            #expect(items.count == lines.count)
            for (key, item) in zip(lines, items) {
                let id = try #require((item["id"] as? NSNumber)?.int64Value)
                byKey[key, default: []].append(
                    (id, item["created"] as? Bool ?? false, item["duplicate"] as? Bool ?? false))
            }
            let notes = result.error.split(separator: "\n").filter { $0.contains("is a duplicate") }
            #expect(notes.count == items.filter { ($0["duplicate"] as? Bool) == true }.count)
        }
        #expect(byKey.count == keys.count)
        for (key, submits) in byKey {
            #expect(submits.count == Self.submitters)
            #expect(Set(submits.map(\.id)).count == 1, "\(key) has one job: \(submits)")
            #expect(submits.filter(\.created).count == 1, "\(key) was made once")
            #expect(submits.filter(\.duplicate).count == Self.submitters - 1, "\(key): the others are duplicates")
        }
        let jobs = try await store.list(JobQuery(definition: "once", limit: 1000)).jobs
        #expect(jobs.count == keys.count, "one job per key in the database")
        print(
            "unique: \(Self.submitters) submitters × \(keys.count) keys on 3 hosts: \(jobs.count) jobs, "
                + "\(byKey.values.joined().filter(\.duplicate).count) duplicates, submits took \(took)")

        // The jobs end, but key-0's: then key-1 makes a new job, key-0 is a duplicate.
        try Data().write(to: URL(fileURLWithPath: gate + "/key-0"))
        try FileManager.default.removeItem(atPath: gate + "/all")
        try await waitUntil(.seconds(60)) {
            try await store.list(JobQuery(states: [.fulfilled], definition: "once", limit: 1000)).jobs.count
                == keys.count - 1
        }
        let first = try #require(byKey["key-0"]?.first?.id)
        let again = try await cluster.submit(["submit", "once", "--input", "key-1"])
        #expect(again.status == 0 && !again.error.contains("duplicate"), "\(again.error)")
        #expect(Int64(again.output.trimmingCharacters(in: .whitespacesAndNewlines)) != byKey["key-1"]?.first?.id)
        let duplicate = try await cluster.submit(["submit", "once", "--input", "key-0"])
        #expect(duplicate.output == "\(first)\n")
        #expect(duplicate.error.contains("job \(first) is a duplicate"), "\(duplicate.error)")

        // key-0's host dies, and the others stop: no host requeues its job,
        // which holds the key until its lease expires, and no longer.
        let holder = try #require(try await store.job(first)).job
        #expect(holder.state == .running)
        let node = SeveralHostsDaemonTests.node(holder.leaseOwner ?? "")
        let victim = try #require(cluster.hosts.firstIndex { $0.read("jobd.yaml").contains("node: \(node)\n") })
        cluster.hosts[victim].signal(SIGKILL)
        _ = await cluster.hosts[victim].exitStatus()
        let live = cluster.hosts.indices.filter { $0 != victim }.map { cluster.hosts[$0] }
        for host in live { host.signal(SIGTERM) }
        for host in live { #expect(await host.exitStatus() == 0, "\(host.log)") }
        let leaseEnd = try #require(try await store.job(first)?.job.leaseExpiresAt)
        var replacement: Int64?
        try await waitUntil(.seconds(30)) {
            let submit = try await cluster.submit(["submit", "once", "--input", "key-0"])
            let id = Int64(submit.output.trimmingCharacters(in: .whitespacesAndNewlines))
            if id != first { replacement = id }
            return id != first
        }
        let replacementID = try #require(replacement)
        let made = try #require(try await store.job(replacementID)).job
        #expect(made.createdAt >= leaseEnd, "the key freed only once the lease had expired")
        // A host comes back: the old job ends cancelled; the new one runs to its end.
        try FileManager.default.removeItem(atPath: gate + "/key-0")
        try live[0].start(environment: ["JOBD_TEST_GATE": gate])
        try await waitUntil(.seconds(30)) {
            let old = try await store.job(first)?.job.state
            let new = try await store.job(made.id)?.job.state
            return old == .cancelled && new == .fulfilled
        }
        #expect(try await store.job(first)?.job.state == .cancelled)
        #expect(try await store.job(made.id)?.job.state == .fulfilled)
        live[0].signal(SIGTERM)
        #expect(await live[0].exitStatus() == 0, "\(live[0].log)")
        await store.close()
    }

    func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("not within \(limit)")
    }
}

extension SeveralHostsDaemonTests.Cluster {
    /// jobctl with the client's config, its exit status and both outputs.
    func submit(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
        try await runCommand(builtProduct("jobctl"), arguments + ["--config", client.configPath])
    }
}
