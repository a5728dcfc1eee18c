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

/// Runs blocking `body` (a wait, a read) on a new thread, so that it holds
/// none of the few threads of Swift's cooperative pool meanwhile.
func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
