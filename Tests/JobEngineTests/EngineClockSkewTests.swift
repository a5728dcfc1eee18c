import Foundation
import JobConfig
import JobStore
import JobStoreSQLite
import Logging
import TestSupport
import Testing

@testable import JobEngine

/// An engine whose host's wall clock (`EngineConfiguration.clock`) is five
/// minutes off the database's fires schedules by the database's clock,
/// and reports the skew.
@Suite struct EngineClockSkewTests {
    @Test(arguments: [300.0, -300.0])
    func schedulesFireByTheDatabasesClock(offset: TimeInterval) async throws {
        let (store, close) = try await EngineScheduleTests().makeStore(.sqlite)
        let logs = LogLines()
        let configuration = EngineConfiguration(
            renewInterval: .milliseconds(200), pollInterval: .seconds(3600), logger: logs.logger,
            clock: { Date() + offset })
        let definition = try DefinitionLoader(context: definitionContext(of: configuration))
            .parse(yaml: EngineScheduleTests.definition, path: "/jobs.d/tick.yaml").get()
        let engine = Engine(
            configuration: configuration, definitions: [definition], store: store, processRunner: testProcessRunner)
        let started = Date()
        engine.start()
        let deadline = ContinuousClock.now + .seconds(90)
        var fired: [Job] = []
        while fired.filter({ $0.state == .fulfilled }).count < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            fired = try await store.list(JobQuery(definition: "tick", limit: 100)).jobs
        }
        await engine.drain(grace: .zero)
        let now = Date()
        #expect(fired.filter { $0.state == .fulfilled }.count >= 2, "\(fired.map(\.state)); \(logs.all.suffix(10))")
        for job in fired {
            let occurrence = try #require(job.scheduledFor)
            #expect(occurrence <= now, "an occurrence fired ahead of the database's clock")
            #expect(occurrence >= started - 2, "an occurrence fired for a time long past")
        }
        let marks = try await store.scheduleMarks()
        #expect(!marks.isEmpty)
        for mark in marks { #expect(mark.firedThrough <= now, "the mark moved ahead of the database's clock") }
        // Reported, not acted on.
        let skew = try #require(engine.clockSkew)
        #expect(abs(skew - offset) < 2, "skew \(skew)")
        let side = offset > 0 ? "ahead of" : "behind"
        #expect(
            logs.all.contains {
                $0.contains("this host's wall clock is 30") && $0.contains("s \(side) the database's")
            },
            "\(logs.all.prefix(10))")
        await close()
    }
}
