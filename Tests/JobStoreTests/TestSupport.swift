import Foundation
import JobValues
import Spawn
import Synchronization
import TestSupport
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

/// A folder of its own for each test, removed at the end.
final class TemporaryFolder: Sendable {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "jobstore-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A store in a fresh folder; keep the folder alive as long as the store.
func makeStore(maxValueBytes: Int = 1 << 20) throws -> (SQLiteJobStore, TemporaryFolder) {
    let folder = try TemporaryFolder()
    let store = try SQLiteJobStore(
        SQLiteJobStoreConfiguration(path: folder.file("jobs.sqlite"), maxValueBytes: maxValueBytes))
    return (store, folder)
}

let threeStages = [
    StagePlan(name: "fetch", kind: "then"),
    StagePlan(name: "total", kind: "map"),
    StagePlan(name: "publish", kind: "done"),
]

func job(
    _ definition: String = "report", input: String? = nil, priority: Int = 0, key: String? = nil,
    runAt: Date? = nil, pool: String = "default", stages: [StagePlan] = threeStages
) -> NewJob {
    NewJob(
        definition: definition, pool: pool, input: input.map { Data($0.utf8) }, priority: priority,
        runAt: runAt, idempotencyKey: key, stages: stages)
}

/// Expects `body` to throw a JobStoreError with `code`, and returns it.
@discardableResult
func expectStoreError<T>(
    _ code: JobStoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> JobStoreError? {
    do {
        _ = try await body()
        Issue.record("expected a \(code) error, got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as JobStoreError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a JobStoreError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The `jobstore-bench` executable, built beside the test bundle; it holds
/// the child commands the multi-process tests start.
func helperExecutable() throws -> String {
    let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    var folder = (me as NSString).deletingLastPathComponent
    // The test binary may sit inside a `.xctest` bundle folder.
    if folder.hasSuffix(".xctest") { folder = (folder as NSString).deletingLastPathComponent }
    let helper = folder + "/jobstore-bench"
    guard FileManager.default.isExecutableFile(atPath: helper) else {
        throw HelperMissing(path: helper)
    }
    return helper
}

struct HelperMissing: Error, CustomStringConvertible {
    var path: String
    var description: String { "no helper at \(path): run `swift build --product jobstore-bench` first" }
}

/// A child process whose stdout is read line by line and whose stderr is
/// drained all along, so that a full pipe never blocks it.
final class ChildProcess: Sendable {
    private let process: SpawnedProcess
    /// The complete lines of stdout read so far, and how many of its bytes they took.
    private let parsed = Mutex<(lines: [String], bytes: Int)>(([], 0))

    init(_ executable: String, _ arguments: [String]) throws {
        process = try SpawnedProcess(executable, arguments, stdout: .capture, stderr: .capture)
    }

    var pid: pid_t { process.pid }

    func kill(_ signal: Int32) {
        process.signal(signal)
    }

    /// Waits until `predicate` holds for the lines read so far, stdout ends,
    /// or `timeout` passes; returns the lines.
    func waitForLines(timeout: Duration, _ predicate: @Sendable ([String]) -> Bool) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let captured = process.captured
            let lines = lines(of: captured.stdout)
            if predicate(lines) || captured.stdoutEnded || ContinuousClock.now > deadline { return lines }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Reads both pipes to their end, then reaps the child.
    func finish() async -> (status: Int32, signaled: Bool, lines: [String], stderr: String) {
        let finished = await process.finish()
        return (
            finished.termination.status, finished.termination.exitCode == nil, lines(of: finished.stdout),
            finished.stderrText
        )
    }

    /// The complete lines of `stdout` (all stdout so far): a last line
    /// without its newline was cut short, it is not an acknowledgement.
    private func lines(of stdout: [UInt8]) -> [String] {
        parsed.withLock { parsed in
            var start = parsed.bytes
            while let newline = stdout[start...].firstIndex(of: UInt8(ascii: "\n")) {
                parsed.lines.append(String(decoding: stdout[start..<newline], as: UTF8.self))
                start = newline + 1
            }
            parsed.bytes = start
            return parsed.lines
        }
    }
}

/// `body`'s value, or a ``TestFailure`` once `limit` passed without it. A
/// call that hangs (and ignores cancellation, as a store call waiting on
/// the server may) fails the test instead of holding the suite for ever;
/// it is left running.
func answered<T: Sendable>(
    within limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let first = FirstResult<T>()
    return try await withCheckedThrowingContinuation { continuation in
        first.set(continuation)
        let timer = Task {
            try? await Task.sleep(for: limit)
            first.resume(.failure(TestFailure("\(what): no answer within \(limit)")))
        }
        Task {
            do { first.resume(.success(try await body())) } catch { first.resume(.failure(error)) }
            timer.cancel()
        }
    }
}

/// Resumes its continuation with the first result given.
private final class FirstResult<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(_ result: Result<T, any Error>) {
        let waiting = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }
}
