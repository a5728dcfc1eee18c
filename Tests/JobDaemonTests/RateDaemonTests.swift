import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
import JobStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `rate: 10/1s` with the real binaries: no window of one second holds more
/// than 10 starts — a start being a claim, at the time each job's
/// `started_at` records — and the starts the stages stamp themselves keep
/// up with the rate. Over 3 s here; `JOBD_RATE_TEST_SECONDS=30` measures
/// longer (by hand, not in CI).
///
/// A stage's own stamp trails its claim by the time jobd takes to launch
/// it, more for the last of a burst of launches than for the first: by
/// the stamps, a second may hold a few more than 10 (printed, not held).
@Suite(.serialized) struct RateDaemonTests {
    /// Each run appends `NS ID` (nanoseconds) to `$JOBD_TEST_STAMPS`.
    static let rated = """
        rate: 10/1s
        pipeline:
          - then: work
            run: [sh, -c, 'echo "$(date +%s%N) $JOBD_JOB_ID" >> "$JOBD_TEST_STAMPS"']
        """

    static var seconds: Int {
        ProcessInfo.processInfo.environment["JOBD_RATE_TEST_SECONDS"].flatMap(Int.init) ?? 3
    }

    /// One jobd on SQLite.
    @Test(.timeLimit(.minutes(2)))
    func aRateHoldsOnOneHost() async throws {
        let harness = try DaemonHarness(yaml: "pools: { default: 4 }", definitions: ["rated": Self.rated])
        let stamps = harness.folder + "/stamps"
        try Data().write(to: URL(fileURLWithPath: stamps))
        try harness.start(environment: ["JOBD_TEST_STAMPS": stamps])
        _ = try #require(await harness.notify.waitFor("READY", "1"), "jobd did not start: \(harness.log)")
        let file = harness.folder + "/inputs"
        try Self.inputs.write(toFile: file, atomically: true, encoding: .utf8)
        let submitted = try await runCommand(
            builtProduct("jobctl"), ["submit", "rated", "--batch", file, "--config", harness.configPath])
        #expect(submitted.status == 0, "\(submitted.error)")
        try await Self.check(stamps)
        let store = try harness.openStore()
        Self.checkClaims(try await store.list(JobQuery(limit: 10 * (Self.seconds + 1), values: false)).jobs)
        harness.signal(SIGTERM)
        #expect(await harness.exitStatus() == 0, "\(harness.log)")
    }

    /// Three jobds sharing one PostgreSQL.
    @Test(.timeLimit(.minutes(2)))
    func aRateHoldsAcrossThreeHosts() async throws {
        let cluster = try await SeveralHostsDaemonTests.Cluster(
            hosts: 3, definitions: ["rated": Self.rated], sharingTheServer: true)
        defer { cluster.tearDown() }
        let stamps = cluster.client.folder + "/stamps"
        try Data().write(to: URL(fileURLWithPath: stamps))
        for host in cluster.hosts { try host.start(environment: ["JOBD_TEST_STAMPS": stamps]) }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }
        _ = try await cluster.jobctl(["submit", "rated"], stdin: Self.inputs)
        try await Self.check(stamps)
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        Self.checkClaims(try await store.list(JobQuery(limit: 10 * (Self.seconds + 1), values: false)).jobs)
        await store.close()
        for host in cluster.hosts { host.signal(SIGTERM) }
        for host in cluster.hosts { #expect(await host.exitStatus() == 0, "\(host.log)") }
    }

    /// More jobs than can start in the measured time: the rate binds throughout.
    static var inputs: String { (0..<(seconds + 1) * 10).map(String.init).joined(separator: "\n") + "\n" }

    /// Waits for the start after the measured seconds, then checks every
    /// window of one second, and the starts within the seconds from the first.
    static func check(_ path: String) async throws {
        let second: Int64 = 1_000_000_000
        let wanted = seconds * 10
        var starts: [Int64] = []
        let deadline = ContinuousClock.now + .seconds(seconds + 30)
        while ContinuousClock.now < deadline {
            starts = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
                $0.split(separator: " ").first.flatMap { Int64($0) }
            }.sorted()
            if starts.count > wanted { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(starts.count > wanted, "only \(starts.count) starts")
        let measured = starts.filter { $0 < starts[0] + Int64(seconds) * second }.count
        #expect(
            Double(measured) >= 0.95 * Double(wanted),
            "\(measured) stamped starts in the first \(seconds) s, at least 95 % of \(wanted)")
        print(
            "rate 10/1s over \(seconds) s: \(measured) stamped starts (\(wanted) allowed), "
                + "busiest second by the stamps \(busiest(starts, second))")
    }

    /// Every job started was claimed once, and no second holds more than 10 claims.
    static func checkClaims(_ jobs: [Job]) {
        #expect(jobs.count == (seconds + 1) * 10, "every job read")
        let started = jobs.filter { $0.startedAt != nil }
        #expect(started.allSatisfy { $0.claims == 1 }, "each job claimed once")
        let claims = started.compactMap { $0.startedAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } }
            .sorted()
        let most = busiest(claims, 1000)
        #expect(most <= 10, "at most 10 claims in any second; \(most) in the busiest")
        #expect(most == 10, "the rate was reached")
        print("rate 10/1s: \(claims.count) claims, busiest second by the claims \(most)")
    }

    /// The most times in a window of `length`: the busiest starts at some time.
    static func busiest(_ times: [Int64], _ length: Int64) -> Int {
        var most = 0
        var end = 0
        for (index, time) in times.enumerated() {
            while end < times.count && times[end] < time + length { end += 1 }
            most = max(most, end - index)
        }
        return most
    }
}
