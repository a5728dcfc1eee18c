import Foundation
import JobDashboard
import JobConfig
import JobHTTP
import JobMetrics
import JobStore
import Testing

/// A real Prometheus (Debian's, installed by scripts/test-deps) scrapes the
/// listener; its query API must report the resolved-job counts the store has.
@Suite struct PrometheusScrapeTests {
    static let prometheus = "/usr/bin/prometheus"

    @Test func prometheusReportsTheResolvedCountsOfTheStore() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.prometheus) else {
            throw TestFailure("no \(Self.prometheus): run make test (scripts/test-deps installs Debian's prometheus)")
        }
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
            try await filler.run(definition, stages: [.init(name: "work", outcome: .fulfilled(Data()))], finish: outcome)
            metrics.metrics.jobResolved(definition: definition, state: state)
        }
        let stored = try await store.countJobs(in: JobState.resolvedSet)
        let dashboard = Dashboard(source: StoreDashboardSource(store: store) {
            DashboardSnapshot(build: BuildInfo(version: "scrape-test", node: "test"))
        })

        try await withHTTPService(dashboard: dashboard, prometheus: metrics) { bound in
            guard case .tcp(_, let port) = bound else { throw TestFailure("not TCP") }
            let webPort = try freePort()
            try """
                global: { scrape_interval: 1s, evaluation_interval: 1s }
                scrape_configs:
                  - job_name: jobd
                    static_configs: [{ targets: ["127.0.0.1:\(port)"] }]
                """.write(toFile: folder.file("prometheus.yml"), atomically: true, encoding: .utf8)
            let server = try Child(Self.prometheus, [
                "--config.file=\(folder.file("prometheus.yml"))", "--storage.tsdb.path=\(folder.file("tsdb"))",
                "--web.listen-address=127.0.0.1:\(webPort)", "--log.level=warn",
            ], output: folder.file("prometheus.log"))
            defer { server.stop() }

            let api = JobHTTPService.BoundAddress.tcp(host: "127.0.0.1", port: webPort)
            let query = "sum by (state) (jobd_jobs_resolved_total)"
            var reported: [String: Double] = [:]
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if let result = try? await Self.query(query, api), !result.isEmpty {
                    reported = result
                    break
                }
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(server.process.isRunning, "prometheus exited: \(server.log)")
            let expected = Dictionary(uniqueKeysWithValues: stored.map { ($0.key.rawValue, Double($0.value)) })
                .filter { $0.value > 0 }
            #expect(reported == expected, "prometheus log: \(server.log)")
            #expect(expected == ["fulfilled": 6, "rejected": 2, "cancelled": 1])
            // The label value with quotes came through the exposition intact.
            let crm = try await Self.query(#"sum by (state) (jobd_jobs_resolved_total{definition="sync \"crm\""})"#, api)
            #expect(crm == ["fulfilled": 1, "cancelled": 1])
            #expect(try await Self.query(#"up{job="jobd"}"#, api, by: "job") == ["jobd": 1])
        }
    }

    /// `/api/v1/query`: the value of each series, by its `label`.
    static func query(_ promQL: String, _ api: JobHTTPService.BoundAddress, by label: String = "state") async throws -> [String: Double] {
        let encoded = promQL.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let reply = try await RawHTTP.get("/api/v1/query?query=\(encoded)", api)
        guard reply.status == 200 else { throw TestFailure("query \(promQL): HTTP \(reply.status)") }
        struct Answer: Decodable {
            struct Data: Decodable {
                struct Series: Decodable {
                    var metric: [String: String]
                    var value: [Value]
                }
                var result: [Series]
            }
            enum Value: Decodable {
                case time(Double), text(String)
                init(from decoder: any Decoder) throws {
                    let container = try decoder.singleValueContainer()
                    if let number = try? container.decode(Double.self) { self = .time(number) } else {
                        self = .text(try container.decode(String.self))
                    }
                }
            }
            var data: Data
        }
        let answer = try JSONDecoder().decode(Answer.self, from: reply.body)
        var values: [String: Double] = [:]
        for series in answer.data.result {
            guard case .text(let text)? = series.value.last, let value = Double(text) else { continue }
            values[series.metric[label] ?? ""] = value
        }
        return values
    }
}
