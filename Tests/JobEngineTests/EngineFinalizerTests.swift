import Foundation
@testable import JobEngine
import JobStore
import Promises
import Testing

private let leakLine: UInt = #line + 2
/// A promise whose resolver goes away at once, the promise still pending.
private func leakyPromise() -> Promise<[UInt8]> { Promise<[UInt8]>.pending().promise }

/// An action that loses its resolver: the promise is deallocated while
/// pending, and the job is rejected instead of running forever.
@Suite(.serialized) struct EngineFinalizerTests {
    @Test func aLostResolverRejectsTheJobAndSaysWhere() async throws {
        let harness = try EngineHarness([
            """
            name: leaky
            pipeline:
              - then: fine
                run: [echo, fine]
              - then: lose
                run: [placeholder]
              - recover: rescue
                run: [echo, rescued]
              - finally: cleanup
                run: [echo, cleaned]
            """,
        ], options: EngineOptions(
            leaseDuration: .seconds(5), renewInterval: .milliseconds(100), pollInterval: .milliseconds(200),
            customAction: { _, stage, _ in
                guard stage.name == "lose" else { return nil }
                return leakyPromise()
            }))
        let site = "JobEngineTests/EngineFinalizerTests.swift:\(leakLine)"
        let id = try await harness.submit("leaky")
        let detail = try await harness.resolved(id, within: .seconds(10))
        #expect(detail.job.state == .rejected)
        let error = detail.job.error ?? ""
        #expect(error.contains("stage `lose`"), "\(error)")
        #expect(error.contains("job \(id)"), "\(error)")
        #expect(error.contains("\(site)"), "where the promise was made: \(error)")
        #expect(error.contains("deallocated while pending"), "\(error)")
        #expect(detail.stage("lose")?.state == .rejected)
        #expect(detail.stage("rescue")?.state == .skipped, "a lost promise is not recoverable")
        #expect(detail.stage("cleanup")?.state == .fulfilled)

        let events = try await harness.store.events(of: id).filter { $0.kind == "finalizer-warning" }
        #expect(events.count == 1)
        #expect(events.first?.position == 1)
        #expect(events.first?.message.contains("\(site)") == true)

        let warnings = harness.logs.records.filter { $0.level == .warning && $0.jobID == id && $0.position == 1 }
        #expect(warnings.contains { $0.message.contains("stage `lose`") && $0.message.contains("\(site)") })
        #expect(harness.logs.records.contains { $0.message.contains("pending promise deallocated") },
                "conf.leakHandler feeds the engine's logger")
        await harness.stop()
    }
}
