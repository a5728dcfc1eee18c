import Foundation
import JobProcesses
import JobStore
import JobStoreSQLite
import Synchronization
import TestSupport
import Testing

@testable import JobEngine

/// An action that loses its resolver: the promise is deallocated while
/// pending, and the job is rejected instead of running forever.
///
/// `conf.leakHandler` is process-wide, so this runs the engine in a child
/// process (`engine-test-worker --lose lose`), whose `lose` stages drop
/// their resolver.
@Suite struct EngineFinalizerTests {
    /// Where the worker makes the promise it loses: `engine_test_worker/main.swift:LINE`.
    static func leakSite() throws -> String {
        let source = try String(
            contentsOfFile: repositoryRoot + "/Tests/engine-test-worker/main.swift", encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.contains("Promise<[UInt8]>.pending().promise") }) + 1
        return "engine_test_worker/main.swift:\(line)"
    }

    @Test func aLostResolverRejectsTheJobAndSaysWhere() async throws {
        let folder = try makeTemporaryFolder()
        let definition = """
            name: leaky
            pipeline:
              - then: fine
                run: [echo, fine]
              - then: lose
                run: [echo, never]
              - recover: rescue
                run: [echo, rescued]
              - finally: cleanup
                run: [echo, cleaned]
            """
        try FileManager.default.createDirectory(atPath: folder + "/jobs.d", withIntermediateDirectories: true)
        try write(definition, to: folder + "/jobs.d/leaky.yaml")
        let submitter = try EngineHarness([definition], folder: folder, start: false)
        let id = try await submitter.submit("leaky")

        let exited = Mutex(false)
        let worker = ProcessRunner().run(
            ProcessSpec(
                .argv([
                    workerPath, folder + "/jobd.sqlite", folder + "/jobs.d", "--lose", "lose", "--log",
                    folder + "/worker.log",
                ]))
        ) { _ in exited.withLock { $0 = true } }
        let detail = try await submitter.resolved(id, within: .seconds(20))
        worker.terminate(grace: .zero)
        while !exited.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }

        let site = try Self.leakSite()
        #expect(detail.job.state == .rejected)
        let error = detail.job.error ?? ""
        #expect(error.contains("stage `lose`"), "\(error)")
        #expect(error.contains("job \(id)"), "\(error)")
        #expect(error.contains(site), "where the promise was made (\(site)): \(error)")
        #expect(error.contains("deallocated while pending"), "\(error)")
        #expect(detail.stage("fine")?.state == .fulfilled)
        #expect(detail.stage("lose")?.state == .rejected)
        #expect(detail.stage("rescue")?.state == .skipped, "a lost promise is not recoverable")
        #expect(detail.stage("cleanup")?.state == .fulfilled)

        let events = try await submitter.store.events(of: id).filter { $0.kind == "finalizer-warning" }
        #expect(events.count == 1)
        #expect(events.first?.position == 1)
        #expect(events.first?.message.contains(site) == true)

        // The log: the leak handler's line, then the stage's, naming job, stage and place.
        let log = submitter.read("worker.log")
        #expect(log.contains("pending promise deallocated (made at \(site))"), "\(log)")
        #expect(log.contains("[warning] job \(id) stage 1: stage `lose`"), "\(log)")
    }
}
