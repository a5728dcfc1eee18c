import Foundation
import JobConfig
import JobConfigStore
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

@testable import JobEngine

/// A stage's start, made again after a dropped connection, that reaches
/// the store after the same run finished the job: nothing was lost, so
/// nothing is said to be.
@Suite struct EngineLateWriteTests {
    @Test func aStartMadeAgainAfterItsJobEndedIsNoLostLease() async throws {
        let folder = try makeTemporaryFolder()
        let sqlite = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: folder + "/jobd.sqlite", checkpointInterval: nil))
        let store = LateStartStore(sqlite)
        let logs = LogLines()
        let configuration = EngineConfiguration(
            leaseDuration: .seconds(5), renewInterval: .milliseconds(100), pollInterval: .milliseconds(200),
            storeRetryDelay: .milliseconds(50), maxStoreRetryDelay: .milliseconds(50), logger: logs.logger)
        let definition = try DefinitionLoader(context: definitionContext(of: configuration)).parse(
            yaml: "name: quick\npipeline:\n  - then: echo\n    run: [cat]\n", path: folder + "/quick.yaml"
        ).get()
        let engine = Engine(
            configuration: configuration, definitions: [definition], store: store, processRunner: testProcessRunner)
        let id = try await sqlite.submit(definition.newJob(input: Data("x".utf8))).id
        engine.start()
        // Each wait has a deadline of its own, far beyond what it takes on
        // an idle machine (well under a second): on a loaded one the job
        // may take most of one.
        let fulfilledBy = ContinuousClock.now + .seconds(60)
        while try await sqlite.job(id)?.job.state != .fulfilled, ContinuousClock.now < fulfilledBy {
            try await Task.sleep(for: .milliseconds(20))
        }
        // The start's next try lands after the finish (tries every 50 ms);
        // then its refusal reaches the engine.
        let lateBy = ContinuousClock.now + .seconds(30)
        while store.late == 0, ContinuousClock.now < lateBy {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(100))
        await engine.drain(grace: .zero)
        #expect(try await sqlite.job(id)?.job.state == .fulfilled)
        #expect(
            store.refused >= 1 && store.late >= 1,
            "the start was not made again after the finish: the test did not make the race")
        let said = logs.all.filter { $0.contains("lease") && ($0.contains("warning") || $0.contains("error")) }
        #expect(said.isEmpty, "\(said)")
        try? await sqlite.close()
    }
}
