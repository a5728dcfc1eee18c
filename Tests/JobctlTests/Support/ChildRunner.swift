import Foundation
import JobConfig
import Synchronization
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

/// Runs `executable` to its end on a thread of its own (never on the
/// cooperative pool), reading stdout and stderr while it runs — a child
/// that fills a pipe nobody reads would never end.
func runChild(
    _ executable: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
    directory: String
) async throws -> ChildResult {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try runChildBlocking(executable, arguments, stdin: stdin,
                                                                    environment: environment, directory: directory) })
        }
    }
}

/// The environment children get: a fixed one, not the test runner's (no
/// `JOBD_CONFIG`, no `NO_COLOR` leaking in), plus `extra`.
func childEnvironment(_ extra: [String: String]) -> [String: String] {
    var environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm"]
    environment.merge(extra) { $1 }
    return environment
}

private func runChildBlocking(
    _ executable: String, _ arguments: [String], stdin: Data?, environment: [String: String], directory: String
) throws -> ChildResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = childEnvironment(environment)
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = stdin == nil ? FileHandle.nullDevice : input
    try process.run()
    // Feed stdin and drain stderr on threads of their own, stdout here.
    let group = DispatchGroup()
    if let stdin {
        group.enter()
        Thread.detachNewThread {
            try? input.fileHandleForWriting.write(contentsOf: stdin)
            try? input.fileHandleForWriting.close()
            group.leave()
        }
    }
    let errData = Mutex(Data())
    group.enter()
    Thread.detachNewThread {
        let data = err.fileHandleForReading.readDataToEndOfFile()
        errData.withLock { $0 = data }
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return ChildResult(status: process.terminationStatus, stdout: outData,
                       stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self))
}
