import Foundation

extension SpawnedProcess {
    /// Runs `executable` to its end, capturing its stdout and stderr.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Input = .null
    ) throws -> Finished {
        try SpawnedProcess(
            executable, arguments, environment: environment, directory: directory, stdin: stdin, stdout: .capture,
            stderr: .capture
        ).finish()
    }

    /// ``run(_:_:environment:directory:stdin:)`` on a thread of its own, never on Swift's cooperative pool.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Input = .null
    ) async throws -> Finished {
        try await SpawnedProcess(
            executable, arguments, environment: environment, directory: directory, stdin: stdin, stdout: .capture,
            stderr: .capture
        ).finish()
    }
}

/// A child run to its end, with what it wrote.
public struct Finished: Sendable, CustomStringConvertible {
    public var termination: SpawnedProcess.Termination
    public var stdout: [UInt8]
    public var stderr: [UInt8]

    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    public var description: String { "\(termination)\n--- stdout\n\(stdoutText)--- stderr\n\(stderrText)" }
}

/// Runs `body` on a thread of its own and returns its result. For blocking
/// or long work in an async test (waiting for a child process, reading a
/// socket, seconds of computing): on one of the few threads of Swift's
/// cooperative pool (as many as cores), it would stall every other test
/// running in parallel, and a server under test as well. Record issues
/// (`#expect`) after it returns, in the test's task, not inside `body`.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// `onOwnThread` for a `body` that throws.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
