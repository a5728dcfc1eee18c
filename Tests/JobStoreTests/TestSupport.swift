import Foundation
@_spi(Maintenance) @testable import JobStore
import Synchronization
import Testing

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
    let store = try SQLiteJobStore(JobStoreConfiguration(path: folder.file("jobs.sqlite"), maxValueBytes: maxValueBytes))
    return (store, folder)
}

let threeStages = [
    StagePlan(name: "fetch", kind: "then"),
    StagePlan(name: "total", kind: "map"),
    StagePlan(name: "publish", kind: "done"),
]

func job(_ definition: String = "report", input: String? = nil, priority: Int = 0, key: String? = nil,
         runAt: Date? = nil, pool: String = "default", stages: [StagePlan] = threeStages) -> NewJob {
    NewJob(definition: definition, pool: pool, input: input.map { Data($0.utf8) }, priority: priority,
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
final class ChildProcess: @unchecked Sendable {
    // @unchecked: `process` is configured and started in init and afterwards
    // only read (pid, exit status); the mutable state is in a Mutex.
    private struct Output {
        var lines: [String] = []
        var stdoutEnded = false
        var stderr = Data()
    }

    private final class Shared: Sendable {
        let output = Mutex(Output())
    }

    private let process = Process()
    private let shared = Shared()
    private let pipesDone = DispatchGroup()

    init(_ executable: String, _ arguments: [String]) throws {
        let out = Pipe()
        let err = Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outReader = out.fileHandleForReading
        let errReader = err.fileHandleForReading
        pipesDone.enter()
        pipesDone.enter()
        Thread.detachNewThread { [shared, pipesDone] in
            var partial = Data()
            while true {
                let data = outReader.availableData
                if data.isEmpty { break }
                partial.append(data)
                var complete: [String] = []
                while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                    complete.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                    partial.removeSubrange(partial.startIndex...newline)
                }
                shared.output.withLock { $0.lines += complete }
            }
            // A last line without its newline was cut short: it is not an acknowledgement.
            shared.output.withLock { $0.stdoutEnded = true }
            pipesDone.leave()
        }
        Thread.detachNewThread { [shared, pipesDone] in
            while true {
                let data = errReader.availableData
                if data.isEmpty { break }
                shared.output.withLock { $0.stderr.append(data) }
            }
            pipesDone.leave()
        }
    }

    var pid: pid_t { process.processIdentifier }

    func kill(_ signal: Int32) {
        _ = Foundation.kill(process.processIdentifier, signal)
    }

    /// Waits until `predicate` holds for the lines read so far, stdout ends,
    /// or `timeout` passes; returns the lines.
    func waitForLines(timeout: Duration, _ predicate: @Sendable ([String]) -> Bool) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (lines, ended) = shared.output.withLock { ($0.lines, $0.stdoutEnded) }
            if predicate(lines) || ended || ContinuousClock.now > deadline { return lines }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Reads both pipes to their end, then reaps the child.
    func finish() async -> (status: Int32, signaled: Bool, lines: [String], stderr: String) {
        let process = self.process
        let pipesDone = self.pipesDone
        let (status, signaled) = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                pipesDone.wait()
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, process.terminationReason == .uncaughtSignal))
            }
        }
        let (lines, stderr) = shared.output.withLock { ($0.lines, String(decoding: $0.stderr, as: UTF8.self)) }
        return (status, signaled, lines, stderr)
    }
}

/// Runs blocking work off Swift's cooperative threads.
func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
