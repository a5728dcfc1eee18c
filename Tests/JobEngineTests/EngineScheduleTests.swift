import Foundation
import JobConfig
import JobStore
import JobStorePostgres
import JobStoreSQLite
import JobValues
import Logging
import TestSupport
import Testing

@testable import JobEngine

/// Schedules as the engine fires them, in real time: what the firer writes
/// is claimed by the engine's own pools, on either store.
@Suite struct EngineScheduleTests {
    enum Store: String, CaseIterable, Sendable {
        case sqlite
        case postgres
    }

    static let definition = """
        name: tick
        schedule:
          every: 1s
        pipeline:
          - then: work
            run: [true]
        """

    /// A store of `kind` and what ends it.
    func makeStore(_ kind: Store) async throws -> (any JobStore, @Sendable () async -> Void) {
        switch kind {
        case .sqlite:
            let folder = try makeTemporaryFolder()
            let store = try SQLiteJobStore(
                SQLiteJobStoreConfiguration(path: folder + "/jobd.sqlite", checkpointInterval: nil))
            return (
                store,
                {
                    try? await store.close()
                    try? FileManager.default.removeItem(atPath: folder)
                }
            )
        case .postgres:
            let server = try await TestPostgres.shared()
            let store = try await PostgresJobStore(
                PostgresJobStoreConfiguration(
                    endpoint: .unixSocket(path: server.socket), user: "postgres", password: nil, database: "jobd_test",
                    schema: "engine_schedule_\(getpid())"))
            let running = Task { _ = try? await store.run() }
            return (
                store,
                {
                    await store.close()
                    running.cancel()
                }
            )
        }
    }

    /// With a poll an hour apart, only the engine's own claim after a fire
    /// can start a scheduled job: the occurrence's job runs (and, with
    /// `overlap: skip`, ends before the next occurrence, which then fires).
    @Test(arguments: Store.allCases)
    func aFiredOccurrenceIsClaimedWithoutWaitingForThePoll(_ kind: Store) async throws {
        let (store, close) = try await makeStore(kind)
        let logs = LogLines()
        let configuration = EngineConfiguration(pollInterval: .seconds(3600), logger: logs.logger)
        let definition = try DefinitionLoader(context: definitionContext(of: configuration))
            .parse(yaml: Self.definition, path: "/jobs.d/tick.yaml").get()
        let engine = Engine(
            configuration: configuration, definitions: [definition], store: store, processRunner: testProcessRunner)
        engine.start()
        // A liveness bound: without the claim after a fire, nothing runs for an hour.
        let deadline = ContinuousClock.now + .seconds(300)
        var fulfilled: [Job] = []
        while fulfilled.count < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            fulfilled = try await store.list(JobQuery(states: [.fulfilled], definition: "tick", limit: 100)).jobs
        }
        await engine.drain(grace: .zero)
        #expect(fulfilled.count >= 2, "scheduled jobs that ran: \(fulfilled.count); \(logs.all.suffix(10))")
        for job in fulfilled {
            let scheduledFor = try #require(job.scheduledFor)
            #expect(try #require(job.startedAt) >= scheduledFor)
        }
        await close()
    }
}
