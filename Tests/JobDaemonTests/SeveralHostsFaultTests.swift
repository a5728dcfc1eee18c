import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
@_spi(Maintenance) import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several hosts on one PostgreSQL under faults, with the real binaries
/// (the cluster of ``SeveralHostsDaemonTests``, lease 3 s): a host frozen
/// inside a transaction holds up neither the takeover of its jobs nor the
/// other hosts' schedules; a host cut off from the database stops its
/// stages before another host starts them.
@Suite(.serialized) struct SeveralHostsFaultTests {
    typealias Cluster = SeveralHostsDaemonTests.Cluster

    /// Fires every second on every host; a job of it ends at once.
    static let tick = """
        schedule: { every: 1s, overlap: allow }
        pipeline:
          - then: tick
            run: ['true']
        """

    /// One stage that runs for 30 s and writes, to the file its host's
    /// `$JOBD_TEST_STAMPS` names, a line when it starts and one when it ends
    /// (SIGTERM included): `JOB start|end SECONDS`.
    static let stamped = """
        pipeline:
          - then: stamped
            run: [sh, -c, 'f="$JOBD_TEST_STAMPS"; trap ''echo "$JOBD_JOB_ID end $(date +%s.%N)" >> "$f"; exit 143'' TERM; echo "$JOBD_JOB_ID start $(date +%s.%N)" >> "$f"; sleep 30; echo "$JOBD_JOB_ID end $(date +%s.%N)" >> "$f"']
        """

    /// host-0 stops itself (SIGSTOP, the debug builds' hook
    /// `JOBD_TEST_STOP_IN_TRANSACTION`) inside a transaction that holds a
    /// schedule's mark and its running jobs' rows locked. The server ends
    /// that session after a third of the lease, so the live hosts take its
    /// jobs over once its leases expired, and their schedules fire on.
    @Test(.timeLimit(.minutes(2)))
    func aHostFrozenInsideATransactionHoldsUpNeitherTakeoverNorSchedules() async throws {
        let cluster = try await Cluster(hosts: 3, hostYAML: "shutdown-grace: 1s\n", definitions: ["tick": Self.tick])
        defer { cluster.tearDown() }
        let frozenHost = cluster.hosts[0]
        let flag = frozenHost.folder + "/freeze"
        frozenHost.environment["JOBD_TEST_STOP_IN_TRANSACTION"] = flag
        // host-0 first, alone: it runs all three jobs; then the others start.
        try frozenHost.start()
        _ = try #require(await frozenHost.notify.waitFor("READY", "1"), "jobd did not start: \(frozenHost.log)")
        let held = try await cluster.jobctl(["submit", "hold"], stdin: "1\n2\n3\n")
            .split(separator: "\n").compactMap { Int64($0) }
        #expect(held.count == 3)
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        try await waitUntil(.seconds(20)) {
            try await store.list(JobQuery(states: [.running], definition: "hold", limit: 10)).jobs.count == 3
        }
        for host in cluster.hosts.dropFirst() { try host.start() }
        for host in cluster.hosts.dropFirst() {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }

        // host-0 freezes the next time it fires an occurrence.
        #expect(FileManager.default.createFile(atPath: flag, contents: nil))
        try await waitUntil(.seconds(30)) { Self.state(of: frozenHost.pid) == "T" }
        let frozen = Date()
        #expect(Self.state(of: frozenHost.pid) == "T", "host-0 never stopped inside a transaction: \(frozenHost.log)")

        // Each of its jobs runs again on a live host, within the lease and the renewal slack.
        var takenOver: Date?
        try await waitUntil(.seconds(20)) {
            for id in held {
                let job = try #require(try await store.job(id)).job
                guard job.state == .running, job.claims >= 2,
                    job.leaseOwner.map(SeveralHostsDaemonTests.node) != "host-0"
                else { return false }
            }
            takenOver = Date()
            return true
        }
        let takeover = try #require(takenOver, "host-0's jobs were not taken over").timeIntervalSince(frozen)
        // The bound is lease + 5 s; the 2 s beside it are this poll's own
        // lateness when the whole suite loads the machine (before the fix
        // nothing was taken over in 20 s).
        #expect(takeover <= 3 + 5 + 2, "taken over \(takeover) s after the freeze")
        // Let the schedules run on for a few seconds after the takeover.
        try await Task.sleep(for: .seconds(3))
        let end = Date()

        // The live hosts kept firing: no gap between two occurrences' jobs
        // (or from the freeze to the first) much longer than the period.
        let ticks = try await store.list(JobQuery(definition: "tick", limit: 1000)).jobs
        let fired = ticks.map(\.createdAt).filter { $0 > frozen && $0 < end }.sorted()
        let gaps = zip([frozen] + fired, fired + [end]).map { $1.timeIntervalSince($0) }
        let heldUp = (gaps.max() ?? end.timeIntervalSince(frozen)) - 1
        #expect(heldUp < 5, "the live hosts' schedules were held up \(heldUp) s (gaps \(gaps))")
        // And each occurrence due since the freeze fired soon after its time.
        let late = ticks.compactMap { job in job.scheduledFor.map { job.createdAt.timeIntervalSince($0) } }
        let lateness = zip(ticks, late).filter { $0.0.scheduledFor! > frozen - 1 }.map(\.1).max() ?? 0
        #expect(lateness < 5, "an occurrence fired \(lateness) s after its time")
        print(
            "frozen-in-transaction: takeover \(String(format: "%.2f", takeover)) s after the freeze (lease 3 s); "
                + "longest gap between the live hosts' occurrences \(String(format: "%.2f", (gaps.max() ?? 0))) s "
                + "(period 1 s); latest occurrence fired \(String(format: "%.2f", lateness)) s after its time")

        frozenHost.signal(SIGKILL)
        for host in cluster.hosts.dropFirst() { host.signal(SIGTERM) }
        for host in cluster.hosts.dropFirst() { #expect(await host.exitStatus() == 0, "\(host.log)") }
        _ = await frozenHost.exitStatus()
        await store.close()
    }

    /// host-0's link goes down while it runs stages: it stops them before
    /// their leases can expire, and so before host-1 starts them again.
    @Test(.timeLimit(.minutes(2)))
    func aCutOffHostStopsItsStagesBeforeAnotherHostStartsThem() async throws {
        let cluster = try await Cluster(hosts: 2, definitions: ["stamped": Self.stamped], inNamespaces: true)
        defer { cluster.tearDown() }
        for (index, host) in cluster.hosts.enumerated() {
            host.environment["JOBD_TEST_STAMPS"] = host.folder + "/stamps-\(index)"
        }
        // host-0 first, alone: it runs all three jobs; then host-1 starts.
        try cluster.hosts[0].start()
        _ = try #require(
            await cluster.hosts[0].notify.waitFor("READY", "1"), "jobd did not start: \(cluster.hosts[0].log)")
        let ids = try await cluster.jobctl(["submit", "stamped"], stdin: "1\n2\n3\n")
            .split(separator: "\n").compactMap { Int64($0) }
        #expect(ids.count == 3)
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        try await waitUntil(.seconds(20)) {
            let started = Self.stamps(cluster.hosts[0].read("stamps-0"))
            return ids.allSatisfy { started[$0]?.start != nil }
        }
        try cluster.hosts[1].start()
        _ = try #require(
            await cluster.hosts[1].notify.waitFor("READY", "1"), "jobd did not start: \(cluster.hosts[1].log)")
        let onHost0 = ids
        try cluster.hostNamespaces[0].setLink(up: false)

        // host-1 starts each of them.
        try await waitUntil(.seconds(20)) {
            let started = Self.stamps(cluster.hosts[1].read("stamps-1"))
            return onHost0.allSatisfy { started[$0]?.start != nil }
        }
        let cutOff = Self.stamps(cluster.hosts[0].read("stamps-0"))
        let taken = Self.stamps(cluster.hosts[1].read("stamps-1"))
        for id in onHost0 {
            let ended = try #require(cutOff[id]?.end, "job \(id): its stage on the cut-off host never ended")
            let started = try #require(taken[id]?.start, "job \(id) never started on host-1")
            let gap = started - ended
            #expect(gap > 0, "job \(id): host-1 started its stage \(gap) s after host-0's ended")
            print(
                "cut-off host: job \(id): \(String(format: "%.3f", gap)) s between host-0's stage ending and host-1's starting"
            )
        }

        for host in cluster.hosts { host.signal(SIGKILL) }
        for host in cluster.hosts { _ = await host.exitStatus() }
        await store.close()
    }

    /// `JOB start|end SECONDS` lines: each job's first start and last end.
    static func stamps(_ text: String) -> [Int64: (start: Double?, end: Double?)] {
        var result: [Int64: (start: Double?, end: Double?)] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 3, let id = Int64(parts[0]), let time = Double(parts[2]) else { continue }
            var entry = result[id] ?? (nil, nil)
            if parts[1] == "start" { entry.start = entry.start ?? time } else { entry.end = time }
            result[id] = entry
        }
        return result
    }

    /// The state letter of `/proc/PID/stat` (`T`: stopped), or nil.
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
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("not within \(limit)")
    }
}
