import Foundation
import Spawn
import Testing

/// The repository this test file is in.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
}()

/// A tool the oracle tests need is missing: they fail, saying how to get it.
struct MissingOracle: Error, CustomStringConvertible {
    var description: String
}

/// The reference implementations the calendar math is compared with:
/// croniter (PyPI, in the test virtualenv) and systemd-analyze.
enum Oracle {
    /// `$JOBD_TEST_VENV/bin/python3`, else `<repository>/.venv-test/bin/python3`.
    static func python() throws -> String {
        let venv = ProcessInfo.processInfo.environment["JOBD_TEST_VENV"] ?? repositoryRoot + "/.venv-test"
        let path = venv + "/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw MissingOracle(
                description: "no \(path): run `make test` (or scripts/test-deps) to create the "
                    + "virtualenv with croniter, or set JOBD_TEST_VENV")
        }
        return path
    }

    static func systemdAnalyze() throws -> String {
        for folder in ["/usr/bin", "/bin", "/usr/local/bin"]
        where
            FileManager.default.isExecutableFile(atPath: folder + "/systemd-analyze")
        {
            return folder + "/systemd-analyze"
        }
        throw MissingOracle(
            description: "systemd-analyze is not installed: run `make test` (scripts/test-deps) "
                + "on a machine with systemd")
    }

    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs a program to its end, feeding `stdin` and reading both pipes
    /// while it runs (a child blocked on a full pipe never ends).
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        stdin: Data = Data()
    ) throws -> Output {
        var base = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "SYSTEMD_COLORS": "0", "SYSTEMD_PAGER": "cat"]
        base.merge(environment) { $1 }
        let finished = try SpawnedProcess.run(executable, arguments, environment: base, stdin: .bytes(Array(stdin)))
        return Output(status: finished.termination.status, stdout: Data(finished.stdout), stderr: finished.stderrText)
    }
}

/// `2027-01-15T08:15:00Z` for messages.
func rfc3339(_ seconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
}
