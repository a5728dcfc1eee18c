import Foundation
import Spawn

/// A real Prometheus (Debian's, installed by scripts/test-deps) scraping
/// targets every second, and its query API.
///
/// ```swift
/// let server = try PrometheusServer(scraping: ["127.0.0.1:9464"], in: folder)
/// defer { server.stop() }
/// let counts = try await server.waitForQuery("sum by (state) (jobd_jobs_resolved_total)") { $0 == expected }
/// ```
public final class PrometheusServer {
    public static let path = "/usr/bin/prometheus"

    /// Its HTTP API (`/api/v1/query`).
    public let api: HTTPEndpoint
    private let child: Child

    /// Starts Prometheus with its configuration, database and log in
    /// `folder`, scraping `targets` (`host:port`) as job `jobd`.
    public init(scraping targets: [String], in folder: String) throws {
        try requireTool(Self.path, package: "prometheus")
        let port = try freePort()
        let list = targets.map { "\"\($0)\"" }.joined(separator: ", ")
        try """
        global: { scrape_interval: 1s, evaluation_interval: 1s }
        scrape_configs:
          - job_name: jobd
            static_configs: [{ targets: [\(list)] }]
        """.write(toFile: folder + "/prometheus.yml", atomically: true, encoding: .utf8)
        child = try Child(
            Self.path,
            [
                "--config.file=\(folder)/prometheus.yml", "--storage.tsdb.path=\(folder)/tsdb",
                "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
            ], output: folder + "/prometheus.log")
        api = .tcp(host: "127.0.0.1", port: port)
    }

    public var isRunning: Bool { child.process.isRunning }
    /// What Prometheus wrote (warnings and errors).
    public var log: String { child.log }

    public func stop() { child.stop() }

    /// `/api/v1/query`: each series' value, by its labels.
    public func query(_ promQL: String) async throws -> [[String: String]: Double] {
        let encoded = promQL.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let reply = try await RawHTTP.get("/api/v1/query?query=\(encoded)", api)
        guard reply.status == 200 else {
            throw TestFailure("query \(promQL): HTTP \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
        }
        let answer = try JSONDecoder().decode(QueryAnswer.self, from: reply.body)
        var values: [[String: String]: Double] = [:]
        for series in answer.data.result {
            guard case .text(let text)? = series.value.last, let value = Double(text) else { continue }
            values[series.metric] = value
        }
        return values
    }

    /// `/api/v1/query`: each series' value, by the value of its `label`.
    public func query(_ promQL: String, by label: String) async throws -> [String: Double] {
        try await query(promQL).byLabel(label)
    }

    /// Asks `promQL` every 250 ms until `done` holds for the answer, or
    /// `limit` passed: then returns the last answer, for the test to compare
    /// (or throws, if Prometheus never answered).
    public func waitForQuery(
        _ promQL: String, within limit: Duration = .seconds(60), until done: ([[String: String]: Double]) -> Bool
    ) async throws -> [[String: String]: Double] {
        let deadline = ContinuousClock.now + limit
        var last: [[String: String]: Double]?
        while ContinuousClock.now < deadline {
            last = try? await query(promQL)
            if let last, done(last) { return last }
            try await Task.sleep(for: .milliseconds(250))
        }
        guard let last else { throw TestFailure("prometheus never answered \(promQL): \(log.suffix(2000))") }
        return last
    }

    private struct QueryAnswer: Decodable {
        struct Data: Decodable {
            struct Series: Decodable {
                var metric: [String: String]
                var value: [Value]
            }
            var result: [Series]
        }
        /// A sample is `[time, "value"]`.
        enum Value: Decodable {
            case time(Double), text(String)
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let number = try? container.decode(Double.self) {
                    self = .time(number)
                } else {
                    self = .text(try container.decode(String.self))
                }
            }
        }
        var data: Data
    }
}

extension [[String: String]: Double] {
    /// The values by one label's value (series without it under "").
    public func byLabel(_ label: String) -> [String: Double] {
        [String: Double](map { ($0.key[label] ?? "", $0.value) }, uniquingKeysWith: +)
    }
}
