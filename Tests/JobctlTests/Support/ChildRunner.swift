import Foundation
import JobConfig
import Spawn
import Testing

/// What a child process did.
struct ChildResult: Sendable, CustomStringConvertible {
    var status: Int32
    var stdout: Data
    var stderr: String

    var out: String { String(decoding: stdout, as: UTF8.self) }
    var outLines: [String] { out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
    var errLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// stdout parsed as JSON.
    func json() throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: stdout)
        return try #require(value as? [String: Any], "stdout is not a JSON object: \(out)")
    }

    var description: String { "exit \(status)\n--- stdout\n\(out)--- stderr\n\(stderr)" }
}

/// Runs `executable` to its end, reading stdout and stderr while it runs —
/// a child that fills a pipe nobody reads would never end — and waiting
/// on a thread of its own (never on the cooperative pool).
func runChild(
    _ executable: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
    directory: String
) async throws -> ChildResult {
    let finished = try await SpawnedProcess.run(
        executable, arguments, environment: childEnvironment(environment), directory: directory,
        stdin: stdin.map { .bytes(Array($0)) } ?? .null)
    return ChildResult(status: finished.termination.status, stdout: Data(finished.stdout), stderr: finished.stderrText)
}

/// The environment children get: a fixed one, not the test runner's (no
/// `JOBD_CONFIG`, no `NO_COLOR` leaking in), plus `extra`.
func childEnvironment(_ extra: [String: String]) -> [String: String] {
    var environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm"]
    environment.merge(extra) { $1 }
    return environment
}
