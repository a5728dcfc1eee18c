import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
@_spi(Maintenance) import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A jobd (and a jobctl) whose host's wall clock is five minutes off the
/// PostgreSQL server's — moved by a preload shim over `clock_gettime`,
/// `gettimeofday` and `time` — still decides by the server's clock: job
/// timeouts hold as written, a schedule fires its occurrences when they
/// are due and no later mark, `submit --delay` counts from the server's
/// now; and the skew is reported.
@Suite(.serialized) struct ClockSkewDaemonTests {
    static let definitions = [
        // Well within its timeout: fulfilled, whatever the host's clock says.
        "within": "timeout: 1m\npipeline:\n  - then: nap\n    run: [sh, -c, 'sleep 1; cat']\n",
        // Past its timeout: rejected after 2 s, whatever the host's clock says.
        "overrun": "timeout: 2s\npipeline:\n  - then: nap\n    run: [sh, -c, 'sleep 4; cat']\n",
        "tick": "schedule:\n  every: 1s\npipeline:\n  - then: work\n    run: [cat]\n",
    ]

    @Test(.timeLimit(.minutes(3)), arguments: [300, -300])
    func aHostFiveMinutesOffDecidesByTheServersClock(offset: Int) async throws {
        let cluster = try await SeveralHostsDaemonTests.Cluster(hosts: 1, definitions: Self.definitions)
        defer { cluster.tearDown() }
        let skewed = try ClockShim.environment(offset: offset)
        let side = offset > 0 ? "ahead of" : "behind"
        let host = cluster.hosts[0]
        host.environment = host.environment.merging(skewed) { $1 }

        let check = try await runCommand(
            builtProduct("jobd"), ["--check", "--config", host.configPath], environment: Self.environment(skewed))
        #expect(check.status == 0, "\(check)")
        #expect(check.output.contains("wall clock is 300."), "\(check)")
        #expect(check.output.contains("s \(side) the database server's"), "\(check)")

        try host.start()
        _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        let within = try await submit("within", cluster)
        let overrun = try await submit("overrun", cluster)
        // jobctl on the skewed host too.
        let delayed = try await runCommand(
            builtProduct("jobctl"), ["submit", "within", "--delay", "2m", "--config", cluster.client.configPath],
            environment: Self.environment(skewed))
        #expect(delayed.status == 0, "\(delayed)")
        let delayedID = try #require(Int64(delayed.output.trimmingCharacters(in: .whitespacesAndNewlines)))

        let done = try await Self.resolved([within, overrun], store)
        let withinJob = try #require(done[within])
        let overrunJob = try #require(done[overrun])
        #expect(withinJob.state == .fulfilled, "\(withinJob.error ?? "")")
        #expect(overrunJob.state == .rejected)
        #expect(overrunJob.error?.contains("ran past its timeout of 2s") == true, "\(overrunJob.error ?? "")")
        let withinMs = Self.milliseconds(withinJob)
        let overrunMs = Self.milliseconds(overrunJob)
        #expect((1000..<4000).contains(withinMs), "duration_ms \(withinMs)")
        // Stamped by the server's clock as jobd reckons it (a reading placed
        // at the middle of its round trip): on a loaded machine the two
        // stamps may each be off by a few tens of milliseconds. A host's own
        // clock deciding would be off by the 300 s skew.
        #expect((1900..<4000).contains(overrunMs), "duration_ms \(overrunMs)")

        // run_at by the server's clock: now() + 2m, give or take the test's own pace.
        let runAtFromNow = try await store.queryStrings(
            "SELECT extract(epoch FROM run_at - now())::int FROM jobs WHERE id = \(delayedID)")
        let seconds = try #require(runAtFromNow.first.flatMap { $0.flatMap { Int($0) } })
        #expect((100...120).contains(seconds), "run_at is \(seconds) s from the server's now")
        #expect(try await store.job(delayedID)?.job.state == .pending)

        // Occurrences fired on time: none in the future, the mark not ahead.
        try await Self.waitUntil(.seconds(20)) {
            try await store.queryStrings("SELECT count(*) FROM jobs WHERE definition = 'tick' AND state = 'fulfilled'")
                .first.flatMap { $0.flatMap { Int($0) } } ?? 0 >= 2
        }
        let early = try await store.queryStrings(
            "SELECT count(*) FROM jobs WHERE definition = 'tick' AND scheduled_for > now() + interval '1 second'")
        #expect(early == ["0"], "occurrences fired ahead of the server's clock")
        let markAhead = try await store.queryStrings(
            "SELECT count(*) FROM schedule_marks WHERE fired_through > now() + interval '1 second'")
        #expect(markAhead == ["0"], "fired_through moved ahead of the server's clock")

        // Reported: the log, jobctl daemon, the metric.
        #expect(host.log.contains("s \(side) the database's: jobd goes by the database's clock"), "\(host.log)")
        let daemon = try await runCommand(builtProduct("jobctl"), ["daemon", "--json", "--config", host.configPath])
        let skew = try #require(
            (try JSONSerialization.jsonObject(with: Data(daemon.output.utf8)) as? [String: Any])?["clock_skew_seconds"]
                as? Double,
            "\(daemon)")
        #expect(abs(skew - Double(offset)) < 5, "clock_skew_seconds \(skew)")
        let metrics = try await runCommand(builtProduct("jobctl"), ["metrics", "--config", host.configPath])
        let gauge = metrics.output.split(separator: "\n").first { $0.hasPrefix("jobd_clock_skew_seconds ") }
            .flatMap { Double($0.split(separator: " ")[1]) }
        #expect(gauge.map { abs($0 - Double(offset)) < 5 } == true, "\(metrics.output.suffix(800))")

        host.signal(SIGTERM)
        #expect(await host.exitStatus() == 0, "\(host.log)")
        await store.close()
    }

    private func submit(_ name: String, _ cluster: SeveralHostsDaemonTests.Cluster) async throws -> Int64 {
        try #require(
            Int64(
                try await cluster.jobctl(["submit", name, "--input", "x"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    static func environment(_ extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(extra) { $1 }
    }

    static func milliseconds(_ job: Job) -> Int {
        guard let started = job.startedAt, let finished = job.finishedAt else { return -1 }
        return Int((finished.timeIntervalSince(started) * 1000).rounded())
    }

    static func resolved(_ ids: [Int64], _ store: PostgresJobStore) async throws -> [Int64: Job] {
        var jobs: [Int64: Job] = [:]
        try await waitUntil(.seconds(30)) {
            for id in ids where jobs[id] == nil {
                if let job = try await store.job(id)?.job, job.state.isResolved { jobs[id] = job }
            }
            return jobs.count == ids.count
        }
        return jobs
    }

    static func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("not within \(limit)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
