import Foundation
import JobConfig
import JobDashboard
import JobHTTP
import JobMetrics
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

/// A real Prometheus (Debian's, installed by scripts/test-deps) scrapes the
/// listener; its query API must report the resolved-job counts the store has.
@Suite struct PrometheusScrapeTests {
    @Test func prometheusReportsTheResolvedCountsOfTheStore() async throws {
        try requireTool(PrometheusServer.path, package: "prometheus")
        let folder = try TemporaryFolder()
        let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let metrics = PrometheusJobMetrics(version: "scrape-test")
        let filler = StoreFiller(store: store)
        // What an engine does at each job's end: resolve it in the store, count it.
        let outcomes: [(String, JobOutcome, JobState)] =
            Array(repeating: ("report", .fulfilled(Data("ok".utf8)), .fulfilled), count: 5)
            + Array(repeating: ("report", .rejected("exit status 1"), .rejected), count: 2)
            + [("sync \"crm\"", .cancelled(nil), .cancelled), ("sync \"crm\"", .fulfilled(nil), .fulfilled)]
        for (definition, outcome, state) in outcomes {
            try await filler.run(
                definition, stages: [.init(name: "work", outcome: .fulfilled(Data()))], finish: outcome)
            metrics.metrics.jobResolved(definition: definition, state: state)
        }
        let stored = try await store.countJobs(in: JobState.resolvedSet)
        let dashboard = Dashboard(
            source: StoreDashboardSource(store: store) {
                DashboardSnapshot(build: BuildInfo(version: "scrape-test", node: "test"))
            })

        try await withHTTPService(dashboard: dashboard, prometheus: metrics) { bound in
            guard case .tcp(_, let port) = bound else { throw TestFailure("not TCP") }
            let server = try PrometheusServer(scraping: ["127.0.0.1:\(port)"], in: folder.path)
            defer { server.stop() }

            let expected = Dictionary(uniqueKeysWithValues: stored.map { ($0.key.rawValue, Double($0.value)) })
                .filter { $0.value > 0 }
            let reported = try await server.waitForQuery("sum by (state) (jobd_jobs_resolved_total)") {
                $0.byLabel("state") == expected
            }
            #expect(server.isRunning, "prometheus exited: \(server.log)")
            #expect(reported.byLabel("state") == expected, "prometheus log: \(server.log)")
            #expect(expected == ["fulfilled": 6, "rejected": 2, "cancelled": 1])
            // The label value with quotes came through the exposition intact.
            let crm = try await server.query(
                #"sum by (state) (jobd_jobs_resolved_total{definition="sync \"crm\""})"#, by: "state")
            #expect(crm == ["fulfilled": 1, "cancelled": 1])
            #expect(try await server.query(#"up{job="jobd"}"#, by: "job") == ["jobd": 1])
        }
    }
}
