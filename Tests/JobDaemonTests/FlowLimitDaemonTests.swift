import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Concurrency limits with the real binaries, on three hosts sharing one
/// PostgreSQL: what runs at once is measured from the start and end times
/// the stages write themselves.
@Suite(.serialized) struct FlowLimitDaemonTests {
    /// Each run appends `start NS ID PID` and `end NS ID PID` (nanoseconds)
    /// to `$JOBD_TEST_STAMPS`; a line under PIPE_BUF appended with `>>` is
    /// written whole.
    static let limited = """
        limit: { global: 3 }
        pipeline:
          - then: work
            run: [sh, -c, 'echo "start $(date +%s%N) $JOBD_JOB_ID $$" >> "$JOBD_TEST_STAMPS"; sleep 1; echo "end $(date +%s%N) $JOBD_JOB_ID $$" >> "$JOBD_TEST_STAMPS"']
        """

    /// 3 hosts of 4 slots each, `global: 3`: never more than 3 stages run at
    /// once, also while a host is SIGKILLed with jobs running (they stop
    /// there; their slots free when their leases expire, and the jobs run
    /// again elsewhere), and 3 do run at once.
    @Test(.timeLimit(.minutes(2)))
    func aGlobalLimitHoldsAcrossThreeHostsAndAKilledOne() async throws {
        let cluster = try await SeveralHostsDaemonTests.Cluster(hosts: 3, definitions: ["limited": Self.limited])
        defer { cluster.tearDown() }
        let stamps = cluster.client.folder + "/stamps"
        try Data().write(to: URL(fileURLWithPath: stamps))
        for host in cluster.hosts { try host.start(environment: ["JOBD_TEST_STAMPS": stamps]) }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }
        let count = 12
        let ids = try await cluster.jobctl(
            ["submit", "limited"], stdin: (1...count).map(String.init).joined(separator: "\n") + "\n"
        )
        .split(separator: "\n").compactMap { Int64($0) }
        #expect(ids.count == count)

        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        // The host running jobs first is killed (one host may well run them all).
        var victim: (node: String, jobs: [Int64]) = ("", [])
        try await waitUntil(.seconds(20)) {
            let running = try await store.list(JobQuery(states: [.running], limit: 100)).jobs
            guard let node = running.first?.leaseOwner.map(SeveralHostsDaemonTests.node) else { return false }
            victim = (node, running.filter { $0.leaseOwner.map(SeveralHostsDaemonTests.node) == node }.map(\.id))
            return true
        }
        let killed = try #require(cluster.hosts.firstIndex { $0.read("jobd.yaml").contains("node: \(victim.node)\n") })
        let killedAt = Self.nanoseconds()
        cluster.hosts[killed].signal(SIGKILL)

        try await waitUntil(.seconds(60)) {
            try await store.list(JobQuery(states: [.fulfilled], limit: 100)).jobs.count >= count
        }
        #expect(try await store.list(JobQuery(states: [.fulfilled], limit: 100)).jobs.count == count)

        // A run without its end line was killed with its host (its stage's
        // process dies with jobd): it ran until then.
        let lines = try String(contentsOfFile: stamps, encoding: .utf8).split(separator: "\n")
        var starts: [String: Int64] = [:]
        var ends: [String: Int64] = [:]
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count == 4, let time = Int64(fields[1]) else {
                Issue.record("bad stamp line \(line)")
                continue
            }
            let run = fields[2] + "/" + fields[3]
            if fields[0] == "start" { starts[String(run)] = time } else { ends[String(run)] = time }
        }
        var events: [(time: Int64, delta: Int)] = []
        for (run, start) in starts {
            events.append((start, 1))
            events.append((ends[run] ?? killedAt, -1))
        }
        // Ends first at equal times: a slot freed and taken at once is one slot.
        events.sort { ($0.time, $0.delta) < ($1.time, $1.delta) }
        var now = 0
        var most = 0
        for event in events {
            now += event.delta
            most = max(most, now)
        }
        #expect(most <= 3, "at most 3 stages at once across the hosts; \(most) ran at once")
        #expect(most == 3, "the limit was reached")
        #expect(Set(ends.keys.map { $0.split(separator: "/")[0] }).count == count, "every job's stage ended once")
        for id in victim.jobs {
            let job = try #require(try await store.job(id)).job
            #expect(job.claims >= 2, "job \(id), running on \(victim.node) when it was killed, ran again: \(job)")
        }

        let live = cluster.hosts.indices.filter { $0 != killed }.map { cluster.hosts[$0] }
        for host in live { host.signal(SIGTERM) }
        for host in live { #expect(await host.exitStatus() == 0, "\(host.log)") }
        await store.close()
    }

    /// `per-key: 1` with the key from a JSON path, on SQLite: jobctl gives
    /// each job its key at submit, and jobd (pool of 8) runs each key's jobs
    /// one at a time, in submission order, several keys at once. 4 keys × 4
    /// jobs, submitted interleaved; measured from the stages' own stamps.
    @Test(.timeLimit(.minutes(1)))
    func onePerKeyRunsEachKeysJobsInTurn() async throws {
        let definition = """
            limit: { key: {json: .customer}, per-key: 1 }
            pipeline:
              - then: sync
                run: [sh, -c, 'read x; echo "start $(date +%s%N) $x" >> "$JOBD_TEST_STAMPS"; sleep 0.1; echo "end $(date +%s%N) $x" >> "$JOBD_TEST_STAMPS"']
            """
        let harness = try DaemonHarness(yaml: "pools: { default: 8 }", definitions: ["sync": definition])
        let stamps = harness.folder + "/stamps"
        try Data().write(to: URL(fileURLWithPath: stamps))
        try harness.start(environment: ["JOBD_TEST_STAMPS": stamps])
        _ = try #require(await harness.notify.waitFor("READY", "1"), "jobd did not start: \(harness.log)")
        let inputs = (0..<4).flatMap { n in (0..<4).map { c in #"{"customer":"c\#(c)","n":\#(n)}"# } }
        let file = harness.folder + "/inputs"
        try (inputs.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let submitted = try await runCommand(
            builtProduct("jobctl"), ["submit", "sync", "--batch", file, "--config", harness.configPath])
        #expect(submitted.status == 0, "\(submitted.error)")
        let store = try harness.openStore()
        try await waitUntil(.seconds(30)) {
            try await store.list(JobQuery(states: [.fulfilled], limit: 100)).jobs.count >= inputs.count
        }
        // By key: (start, end, n) of each run.
        var runs: [String: [(start: Int64, end: Int64, n: Int)]] = [:]
        var started: [String: Int64] = [:]
        var events: [(time: Int64, delta: Int)] = []
        for line in try String(contentsOfFile: stamps, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, let time = Int64(fields[1]),
                let input = try? JSONSerialization.jsonObject(with: Data(fields[2].utf8)) as? [String: Any],
                let customer = input["customer"] as? String, let n = input["n"] as? Int
            else {
                Issue.record("bad stamp line \(line)")
                continue
            }
            events.append((time, fields[0] == "start" ? 1 : -1))
            if fields[0] == "start" {
                started[customer + "/\(n)"] = time
            } else if let start = started[customer + "/\(n)"] {
                runs[customer, default: []].append((start, time, n))
            }
        }
        #expect(runs.count == 4 && runs.values.allSatisfy { $0.count == 4 }, "\(runs)")
        for (customer, list) in runs {
            let ordered = list.sorted { $0.start < $1.start }
            #expect(ordered.map(\.n) == [0, 1, 2, 3], "\(customer) ran in submission order")
            for (a, b) in zip(ordered, ordered.dropFirst()) {
                #expect(b.start >= a.end, "\(customer): job \(b.n) started before job \(a.n) ended")
            }
        }
        events.sort { ($0.time, $0.delta) < ($1.time, $1.delta) }
        var now = 0
        var most = 0
        for event in events {
            now += event.delta
            most = max(most, now)
        }
        #expect(most >= 2, "several keys ran at once")
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0, "\(harness.log)")
    }

    static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("not within \(limit)")
    }
}
