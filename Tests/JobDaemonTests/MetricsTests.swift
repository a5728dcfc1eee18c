import Foundation
import JobControl
import JobMetrics
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

/// The metrics of the real jobd: what `GET /metrics` and
/// `jobctl metrics` print, read by prometheus_client's strict parser and
/// by a real Prometheus, against what the database holds.
@Suite struct MetricsTests {
    static let definitions = [
        "echo": "pipeline:\n  - then: echo\n    run: [cat]\n",
        "fails": "pipeline:\n  - then: exit-3\n    shell: 'exit 3'\n",
        // Three attempts, each failing: two retries.
        "flaky":
            "pipeline:\n  - then: try\n    shell: 'exit 1'\n    retry: { attempts: 3, backoff: 0s, jitter: false }\n",
        // A program that is not there: the process fails to start.
        "missing": "pipeline:\n  - then: run\n    run: [jobd-test-no-such-program]\n",
    ]

    /// Holds the one slot of pool `batch` until the file its input names
    /// exists (at most a minute: a test that failed half-way leaves no loop behind).
    static let hold = """
        pool: batch
        pipeline:
          - then: wait
            shell: 'read -r file; for i in $(seq 1200); do [ -e "$file" ] && break; sleep 0.05; done; echo held'
          - map: shout
            transform: upper
        """

    /// `jobd_jobs_waiting` by reason: every reason, these counts, 0 for the others.
    static func waiting(_ counts: [String: Double]) -> [String: Double] {
        Dictionary(uniqueKeysWithValues: WaitReason.Code.allCases.map { ($0.rawValue, counts[$0.rawValue] ?? 0) })
    }

    @Test func theExpositionAndJobctlMetricsParseStrictlyAndCountWhatTheDatabaseHolds() async throws {
        let daemon = try HTTPDaemon(
            yaml: "pools: { default: 4, batch: 1 }", definitions: Self.definitions.merging(["hold": Self.hold]) { $1 })
        let harness = daemon.harness
        let store = try await daemon.start()

        // One `hold` job runs in `batch` (cap 1), two more wait for its slot.
        let release = harness.folder + "/release"
        var holds: [Int64] = []
        for _ in 0..<3 { holds.append(try await daemon.jobctlSubmit("hold", input: release)) }
        try await waitUntil("the first hold job runs") { try await store.job(holds[0])?.job.state == .running }
        var ids: [Int64] = []
        for (name, count) in [("echo", 3), ("fails", 2), ("flaky", 1), ("missing", 1)] {
            for number in 0..<count {
                ids.append(try await harness.submit(name, input: "\(name) \(number)", to: store))
            }
        }
        for id in ids { _ = try await harness.resolved(id, in: store) }

        let resolved = try await daemon.resolvedInDatabase()
        for (source, families) in [
            ("GET /metrics", try await daemon.scrape()), ("jobctl metrics", try await daemon.jobctlMetrics()),
        ] {
            // Every family is there with its Prometheus type, the counters' samples ending in _total.
            for family in MetricFamily.all {
                let name = family.kind == .counter ? String(family.name.dropLast("_total".count)) : family.name
                #expect(families[name]?.type == family.kind.rawValue, "\(source): \(family.name)")
            }
            #expect(families.resolved == resolved, "\(source)")
            #expect(
                families.resolved == [
                    ["definition": "echo", "state": "fulfilled"]: 3, ["definition": "fails", "state": "rejected"]: 2,
                    ["definition": "flaky", "state": "rejected"]: 1, ["definition": "missing", "state": "rejected"]: 1,
                ], "\(source)")
            // Pools: `batch` runs one job with two waiting; `default` is idle.
            #expect(families.sum("jobd_jobs_running", by: "pool") == ["default": 0, "batch": 1], "\(source)")
            #expect(families.sum("jobd_jobs_pending", by: "pool") == ["default": 0, "batch": 2], "\(source)")
            // Both wait for `batch`'s one slot, full on this host; every other reason reads 0.
            #expect(families.sum("jobd_jobs_waiting", by: "reason") == Self.waiting(["pool_full": 2]), "\(source)")
        }

        let families = try await daemon.scrape()
        // One observation per stage attempt, by definition and kind, as many as the database has attempts.
        let attempts = try await daemon.attemptsInDatabase()
        #expect(
            families.sum("jobd_stage_duration_seconds_count", by: "definition").filter { $0.key != "hold" }
                == attempts.filter { $0.key != "hold" })
        #expect(attempts["flaky"] == 3)
        let kinds = Set(families.samples(named: "jobd_stage_duration_seconds_count").map { $0.labels["kind"] ?? "" })
        #expect(kinds == ["then"])
        #expect(
            families.value("jobd_stage_duration_seconds_bucket", ["definition": "flaky", "kind": "then", "le": "+Inf"])
                == 3)
        #expect(families.value("jobd_stage_retries_total", ["definition": "flaky"]) == 2)
        // Processes: every attempt of echo, fails and flaky started one, and so did
        // the running hold job's (counted at its start); missing's did not start.
        let started = ["echo", "fails", "flaky", "hold"].compactMap { attempts[$0] }.reduce(0, +)
        #expect(families.value("jobd_processes_started_total") == started)
        #expect(families.value("jobd_processes_failed_to_start_total") == 1)
        #expect(families.value("jobd_pending_promises_deallocated_total") == 0)
        #expect((families.value("jobd_store_commit_seconds_count") ?? 0) > 0)
        #expect(families["jobd_schedule_occurrences"]?.samples.isEmpty == true, "declared; no schedule fired")
        #expect(families.value("jobd_build_info", ["version": JobdVersion.string]) == 1)

        // The held jobs finish: the gauges go back to 0, the counter counts them.
        try harness.write("", to: "release")
        for id in holds { _ = try await harness.resolved(id, in: store) }
        let after = try await daemon.scrape()
        #expect(after.sum("jobd_jobs_running", by: "pool") == ["default": 0, "batch": 0])
        #expect(after.sum("jobd_jobs_pending", by: "pool") == ["default": 0, "batch": 0])
        #expect(after.sum("jobd_jobs_waiting", by: "reason") == Self.waiting([:]))
        #expect(after.resolved == (try await daemon.resolvedInDatabase()))
        #expect(after.resolved[["definition": "hold", "state": "fulfilled"]] == 3)
        #expect(
            after.sum("jobd_stage_duration_seconds_count", by: "definition") == (try await daemon.attemptsInDatabase()))
        #expect(after.sum("jobd_stage_duration_seconds_count", by: "kind") == ["then": 12, "map": 3])
        #expect(after.value("jobd_processes_started_total") == started + 2)

        try await daemon.stop(closing: store)
    }

    @Test func aRealPrometheusScrapingJobdReportsTheDatabasesCounts() async throws {
        try requireTool(PrometheusServer.path, package: "prometheus")
        let daemon = try HTTPDaemon(definitions: Self.definitions)
        let harness = daemon.harness
        let store = try await daemon.start()
        for (name, count) in [("echo", 4), ("fails", 2), ("missing", 1)] {
            for _ in 0..<count { _ = try await harness.resolved(try await harness.submit(name, to: store), in: store) }
        }
        let expected = try await daemon.resolvedInDatabase()
        #expect(expected.values.reduce(0, +) == 7)

        guard case .tcp(_, let port) = daemon.endpoint else { throw TestFailure("not TCP") }
        let prometheus = try PrometheusServer(scraping: ["127.0.0.1:\(port)"], in: harness.folder)
        defer { prometheus.stop() }
        let query = "sum by (definition, state) (jobd_jobs_resolved_total)"
        let reported = try await prometheus.waitForQuery(query) { $0 == expected }
        #expect(reported == expected, "prometheus: \(prometheus.log)")
        #expect(try await prometheus.query(#"up{job="jobd"}"#, by: "job") == ["jobd": 1])
        #expect(try await prometheus.query("jobd_build_info", by: "version") == [JobdVersion.string: 1])

        try await daemon.stop(closing: store)
    }
}

/// Waits until `condition` holds, for up to 20 s.
func waitUntil(_ what: String, within limit: Duration = .seconds(20), _ condition: () async throws -> Bool) async throws
{
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("\(what): not within \(limit)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
