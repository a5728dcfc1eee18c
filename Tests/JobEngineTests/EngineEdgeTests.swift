import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import TestSupport
import Testing

@testable import JobEngine

/// Jobs the engine cannot run, and jobs it loses.
@Suite struct EngineEdgeTests {
    @Test func anUnknownDefinitionRejectsTheJob() async throws {
        let harness = try EngineHarness([
            """
            name: known
            pipeline:
              - then: one
                run: [echo, one]
            """
        ])
        let id = try await harness.store.submit(
            NewJob(
                definition: "vanished", stages: [StagePlan(name: "one", kind: "then")])
        ).id
        harness.engine.nudge()
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .rejected)
        #expect(detail.job.error?.contains("no job definition named `vanished`") == true, "\(detail.job.error ?? "")")
        await harness.stop()
    }

    @Test func aDefinitionEditedSinceSubmitRejectsTheJob() async throws {
        let harness = try EngineHarness([
            """
            name: edited
            pipeline:
              - then: one
                run: [echo, one]
            """
        ])
        let id = try await harness.store.submit(
            NewJob(
                definition: "edited",
                stages: [StagePlan(name: "zero", kind: "then"), StagePlan(name: "one", kind: "then")])
        ).id
        harness.engine.nudge()
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .rejected)
        let error = detail.job.error ?? ""
        // Both ways round (jobd's copy older or newer than the job's), the
        // error names jobd's loaded copy and says to reload before submitting.
        #expect(error.contains("submitted with the stages [then zero, then one]"), "\(error)")
        #expect(error.contains("that jobd has loaded has [then one]"), "\(error)")
        #expect(error.contains("Reload jobd") && error.contains("then submit the job again"), "\(error)")
        await harness.stop()
    }

    @Test func aLostLeaseStopsTheJobWithoutResolvingIt() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness(
            [
                """
                name: stolen
                pipeline:
                  - then: long
                    shell: 'echo $$ > \(out)/pid; sleep 600 & wait'
                """
            ], killGrace: .milliseconds(100))
        let id = try await harness.submit("stolen")
        _ = try await harness.waitFor(id) { $0.stage("long")?.state == .running }
        try await Task.sleep(for: .milliseconds(100))
        // Another runner took the job over (as after this one stalled past its lease).
        try await harness.store.executeInWriteTransaction(
            "UPDATE jobs SET lease_owner = 'someone-else', claims = claims + 1 WHERE id = \(id)")
        let deadline = ContinuousClock.now + .seconds(5)
        while harness.engine.runningCount > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(harness.engine.runningCount == 0, "the engine let go of the job")
        let detail = try #require(try await harness.store.job(id))
        #expect(detail.job.state == .running, "not resolved by the engine that lost it")
        #expect(detail.job.leaseOwner == "someone-else")
        let pid =
            Int32(
                (try String(contentsOfFile: out + "/pid", encoding: .utf8)).trimmingCharacters(
                    in: .whitespacesAndNewlines)) ?? 0
        #expect(pid > 0)
        #expect(await processGroupGone(pid), "its process group was ended")
        #expect(harness.logged(job: id, "lease"))
        await harness.stop()
    }
}

/// A job this engine claims again while its earlier run still ends (the
/// lease lapsed and the job was requeued, as another jobd does after a
/// clock step): the earlier run is stopped, each run is tracked to its own
/// end, and the pool gets every slot back.
@Suite struct EngineClaimedAgainTests {
    @Test func aJobClaimedAgainStopsItsEarlierRunAndLeaksNoPoolSlot() async throws {
        let out = try makeTemporaryFolder()
        // SIGTERM is ignored: the earlier run lasts the kill grace after it is told to stop.
        let harness = try EngineHarness(
            [
                """
                name: again
                pipeline:
                  - then: long
                    shell: 'trap "" TERM; echo $$ >> \(out)/pids; exec sleep 600'
                """
            ], killGrace: .seconds(3))
        let id = try await harness.submit("again")
        _ = try await harness.waitFor(id) { $0.stage("long")?.state == .running }
        try await harness.store.executeInWriteTransaction(
            "UPDATE jobs SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL WHERE id = \(id)")
        harness.engine.nudge()
        func pids() -> [Int32] {
            ((try? String(contentsOfFile: out + "/pids", encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
                Int32($0)
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while pids().count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let (first, second) = (try #require(pids().first), try #require(pids().last))
        #expect(first != second, "claimed and run again")
        #expect(await processGroupGone(first), "the earlier run was stopped")
        try await Task.sleep(for: .milliseconds(500))
        #expect(harness.engine.runningCount == 1, "the later run is still tracked")
        #expect(try await harness.engine.status().runningByPool["default"] == 1)
        #expect(try await harness.store.job(id)?.job.claims == 2)

        _ = try await harness.store.requestCancellation(of: id)
        let detail = try await harness.resolved(id, within: .seconds(60))
        #expect(detail.job.state == .cancelled)
        #expect(await processGroupGone(second))
        #expect(harness.engine.runningCount == 0)
        #expect(try await harness.engine.status().runningByPool["default"] == 0, "no slot leaked")
        await harness.stop()
    }
}

/// Leases are renewed while a job runs longer than one lease.
@Suite struct EngineLeaseTests {
    @Test func aLongStageKeepsItsLease() async throws {
        let harness = try EngineHarness(
            [
                """
                name: long
                pipeline:
                  - then: nap
                    sleep: 1500ms
                """
            ],
            configure: {
                $0.leaseDuration = .milliseconds(400)
                $0.renewInterval = .milliseconds(100)
                $0.pollInterval = .milliseconds(100)
            })
        let detail = try await harness.resolved(try await harness.submit("long"))
        #expect(detail.job.state == .fulfilled)
        #expect(detail.job.claims == 1, "never requeued: the lease was renewed")
        #expect(try await harness.store.events(of: detail.job.id).isEmpty)
        await harness.stop()
    }
}
