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
///
/// The finalizer lives in process-wide settings (`conf.leakHandler`), which
/// other suites running in parallel in this process must not see changed:
/// the scenario runs in a child process (an exit test), its checks are
/// preconditions there.
@Suite struct EngineFinalizerTests {
    @Test func aLostResolverRejectsTheJobAndSaysWhere() async {
        await #expect(processExitsWith: .success) {
            try await lostResolverScenario()
        }
    }
}

private func lostResolverScenario() async throws {
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
        },
        installsProcessHooks: true))
    let site = "JobEngineTests/EngineFinalizerTests.swift:\(leakLine)"
    let id = try await harness.submit("leaky")
    let detail = try await harness.resolved(id, within: .seconds(10))
    precondition(detail.job.state == .rejected, "state \(detail.job.state)")
    let error = detail.job.error ?? ""
    precondition(error.contains("stage `lose`"), error)
    precondition(error.contains("job \(id)"), error)
    precondition(error.contains(site), "where the promise was made: \(error)")
    precondition(error.contains("deallocated while pending"), error)
    precondition(detail.stage("lose")?.state == .rejected)
    precondition(detail.stage("rescue")?.state == .skipped, "a lost promise is not recoverable")
    precondition(detail.stage("cleanup")?.state == .fulfilled)

    let events = try await harness.store.events(of: id).filter { $0.kind == "finalizer-warning" }
    precondition(events.count == 1, "events \(events)")
    precondition(events.first?.position == 1)
    precondition(events.first?.message.contains(site) == true)

    let warnings = harness.logs.records.filter { $0.level == .warning && $0.jobID == id && $0.position == 1 }
    precondition(warnings.contains { $0.message.contains("stage `lose`") && $0.message.contains(site) })
    precondition(harness.logs.records.contains { $0.message.contains("pending promise deallocated") },
                 "conf.leakHandler feeds the engine's logger")
    await harness.stop()
}
