import Foundation

/// Parses an exposition with prometheus_client's
/// `parser.text_string_to_metric_families`, in the virtualenv `make test`
/// makes (scripts/test-deps): `<repository>/.venv-test`, or `$JOBD_TEST_VENV`.
enum PrometheusClientParser {
    struct Family: Decodable {
        var type: String
        var help: String
        var samples: [Sample]
    }

    struct Sample: Decodable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// The families by name. Throws (failing the test) when the virtualenv is
    /// missing or the parser rejects the text.
    static func parse(_ exposition: [UInt8]) throws -> [String: Family] {
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
        // The exposition and stderr go through files, stdout through the
        // one pipe, read to its end before waiting: nothing can block.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("exposition-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputFile = folder.appendingPathComponent("metrics.txt")
        let errorFile = folder.appendingPathComponent("stderr.txt")
        try Data(exposition).write(to: inputFile)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script]
        process.standardInput = try FileHandle(forReadingFrom: inputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let stdoutData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderrData = (try? Data(contentsOf: errorFile)) ?? Data()
        guard process.terminationStatus == 0 else {
            throw ParseError(message: "prometheus_client rejected the exposition:\n"
                + String(decoding: stderrData, as: UTF8.self)
                + "\n--- exposition ---\n" + String(decoding: exposition, as: UTF8.self))
        }
        return try JSONDecoder().decode([String: Family].self, from: stdoutData)
    }

    struct ParseError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    static func pythonPath(filePath: String = #filePath) throws -> String {
        let venv: String
        if let configured = ProcessInfo.processInfo.environment["JOBD_TEST_VENV"], !configured.isEmpty {
            venv = configured
        } else {
            // Tests/JobMetricsTests/<file> → the repository.
            let repository = URL(fileURLWithPath: filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            venv = repository.appendingPathComponent(".venv-test").path
        }
        let python = venv + "/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ParseError(message: "no \(python): run make test (scripts/test-deps makes the test virtualenv)")
        }
        return python
    }
}
