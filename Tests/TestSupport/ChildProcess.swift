import Foundation

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

/// A child process whose output goes to files (no pipe can fill up), ended
/// by its pid.
public final class Child {
    public let process: Process
    public let output: String

    /// - Parameters:
    ///   - output: stderr, and stdout unless `stdout` names another file.
    public init(_ executable: String, _ arguments: [String], output: String, stdout: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = handle
        if let stdout {
            _ = FileManager.default.createFile(atPath: stdout, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
        } else {
            process.standardOutput = handle
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        self.output = output
    }

    public var log: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// Waits for the child to exit by itself, for up to `timeout`; then
    /// kills it. Returns its exit status, or nil if it had to be killed.
    public func wait(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                stop()
                return nil
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL after 5 s; reaps it.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Runs a command to completion; stdout and stderr go through files, so a
/// full pipe cannot stall it.
public func runCommand(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String, error: String) {
    let folder = NSTemporaryDirectory() + "jobd-run-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for name in ["out", "err"] { _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: nil) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/out"))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/err"))
    try process.run()
    process.waitUntilExit()
    return (process.terminationStatus,
            try String(contentsOfFile: folder + "/out", encoding: .utf8),
            try String(contentsOfFile: folder + "/err", encoding: .utf8))
}

/// `runCommand` for an async test: the wait happens on a thread of its own.
public func runCommand(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil
) async throws -> (status: Int32, output: String, error: String) {
    try await onOwnThread { try runCommand(path, arguments, environment: environment) }
}

/// Runs `body` on a thread of its own and returns its result. For blocking
/// work in an async test (waiting for a child process, reading a socket):
/// on one of the few threads of Swift's cooperative pool, it would stall
/// every other test running in parallel, and a server under test as well.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
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
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
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
