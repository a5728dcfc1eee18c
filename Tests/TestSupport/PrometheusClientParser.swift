import Foundation
import Spawn

/// Parses an exposition with prometheus_client's
/// `parser.text_string_to_metric_families`, in the virtualenv `make test`
/// makes (scripts/test-deps): `<repository>/.venv-test`, or `$JOBD_TEST_VENV`.
public enum PrometheusClientParser {
    public struct Family: Decodable, Sendable {
        /// `counter`, `gauge`, `histogram`, … (prometheus_client names a
        /// counter's family without its `_total`; its samples keep it).
        public var type: String
        public var help: String
        public var samples: [Sample]
    }

    public struct Sample: Decodable, Sendable {
        public var name: String
        public var labels: [String: String]
        /// A non-finite value (`+Inf`, `NaN`) reads -1.
        public var value: Double
    }

    /// The families by name. Throws (failing the test) when the virtualenv is
    /// missing or the parser rejects the text.
    public static func parse(_ exposition: [UInt8]) async throws -> [String: Family] {
        let python = try pythonPath()
        let script = """
            import json, math, sys
            from prometheus_client.parser import text_string_to_metric_families
            text = sys.stdin.buffer.read().decode("utf-8")
            out = {}
            for family in text_string_to_metric_families(text):
                if family.name in out:
                    raise SystemExit("family %s appears twice" % family.name)
                out[family.name] = {"type": family.type, "help": family.documentation, "samples": [
                    {"name": s.name, "labels": s.labels, "value": s.value if math.isfinite(s.value) else -1}
                    for s in family.samples]}
            json.dump(out, sys.stdout)
            """
        let finished = try await SpawnedProcess.run(python, ["-c", script], stdin: .bytes(exposition))
        guard finished.termination == .exited(0) else {
            throw ParseError(
                message: "prometheus_client rejected the exposition:\n"
                    + finished.stderrText
                    + "\n--- exposition ---\n" + String(decoding: exposition, as: UTF8.self))
        }
        return try JSONDecoder().decode([String: Family].self, from: Data(finished.stdout))
    }

    public struct ParseError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    static func pythonPath() throws -> String {
        let configured = ProcessInfo.processInfo.environment["JOBD_TEST_VENV"] ?? ""
        let venv = configured.isEmpty ? repositoryRoot + "/.venv-test" : configured
        let python = venv + "/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ParseError(message: "no \(python): run make test (scripts/test-deps makes the test virtualenv)")
        }
        return python
    }
}

extension [String: PrometheusClientParser.Family] {
    /// Every sample named `name` (`jobd_jobs_resolved_total`, `…_bucket`), whatever its family.
    public func samples(named name: String) -> [PrometheusClientParser.Sample] {
        values.flatMap(\.samples).filter { $0.name == name }
    }

    /// The sum of the samples named `name`, by the value of their `label`.
    public func sum(_ name: String, by label: String) -> [String: Double] {
        [String: Double](samples(named: name).map { ($0.labels[label] ?? "", $0.value) }, uniquingKeysWith: +)
    }

    /// The value of the sample named `name` with exactly these labels.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples(named: name).first { $0.labels == labels }?.value
    }
}
