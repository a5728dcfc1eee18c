import Foundation
import Spawn

#if canImport(Glibc)
import Glibc
#endif

/// A test's own failure, with a message that says what went wrong.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Fails, saying how to get it, unless the tool `make test` installs is there:
/// a test that needs Prometheus or Chromium never skips silently.
public func requireTool(_ path: String, package: String) throws {
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw TestFailure("no \(path): run make test (scripts/test-deps installs Debian's \(package))")
    }
}

/// A child process whose output goes to files, stopped by its pid (and
/// killed, should it still run, when this value goes).
public final class Child {
    public let process: SpawnedProcess
    public let output: String

    /// - Parameters:
    ///   - output: stderr, and stdout unless `stdout` names another file.
    public init(_ executable: String, _ arguments: [String], output: String, stdout: String? = nil) throws {
        process = try SpawnedProcess(
            executable, arguments, stdout: .file(stdout ?? output),
            stderr: stdout == nil ? .sameAsStdout : .file(output))
        self.output = output
    }

    public var log: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// Waits for the child to exit by itself, for up to `timeout`; then
    /// kills it. Returns its exit status, or nil if it had to be killed.
    public func wait(timeout: Duration) async -> Int32? {
        if let termination = await process.waitForExit(within: timeout) { return termination.status }
        stop()
        return nil
    }

    /// SIGTERM, then SIGKILL after 5 s; reaps it.
    public func stop() {
        process.stop(grace: .seconds(5))
    }
}

/// Runs a command to completion, reading its stdout and stderr as it writes them.
public func runCommand(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil
) throws -> (status: Int32, output: String, error: String) {
    let finished = try SpawnedProcess.run(path, arguments, environment: environment)
    return (finished.termination.status, finished.stdoutText, finished.stderrText)
}

/// `runCommand` for an async test: the wait happens on a thread of its own.
public func runCommand(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil
) async throws -> (status: Int32, output: String, error: String) {
    let finished = try await SpawnedProcess.run(path, arguments, environment: environment)
    return (finished.termination.status, finished.stdoutText, finished.stderrText)
}

/// A TCP port nobody listens on now (bound to port 0, read, closed).
public func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw TestFailure("no free port: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}

extension String {
    /// How many times `needle` occurs, not overlapping.
    public func occurrences(of needle: String) -> Int {
        components(separatedBy: needle).count - 1
    }
}
