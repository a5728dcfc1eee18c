import Foundation
import JobStore
import JobStoreSQLite
import Synchronization
import TestSupport
import Testing

@testable import JobEngine

/// Pools cap jobs running at once; claims go by priority, then age; delayed
/// jobs start on time; a drain leaves jobs resumable.
@Suite struct EnginePoolTests {
    @Test func aPoolCapsTheJobsRunningAtOnce() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness(
            [
                """
                name: busy
                pool: small
                pipeline:
                  - then: work
                    shell: 'echo "start $(date +%s%N)" >> \(out)/log; i=0; while [ $(grep -c start \(out)/log) -lt 2 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.2; echo "end $(date +%s%N)" >> \(out)/log'
                """
            ], pools: ["default": 16, "small": 2])
        // In one transaction: all six are pending at the engine's first
        // claim, however late the test's own awaits resume.
        _ = try await harness.submit("busy", count: 6)
        var most = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let status = try await harness.engine.status()
            most = max(most, status.runningByPool["small"] ?? 0)
            if try await harness.store.countJobs(in: [.fulfilled])[.fulfilled] == 6 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(most <= 2, "the engine's count")
        // From the processes' own view: 2 at a time, never more. Each job
        // waits (up to 10 s) until two jobs have started, so the first two
        // overlap however slowly a loaded machine starts processes — if the
        // engine lets them run together; run one at a time, they would not.
        // (A plain `sleep 0.5` let a slow second start miss the first job.)
        var running = 0
        var peak = 0
        let events = (try String(contentsOfFile: out + "/log", encoding: .utf8)).split(separator: "\n").map { line in
            let parts = line.split(separator: " ")
            return (parts[0] == "start" ? 1 : -1, Int(parts[1]) ?? 0)
        }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        for (delta, _) in events {
            running += delta
            peak = max(peak, running)
        }
        #expect(peak == 2)
        #expect(events.count == 12)
        await harness.stop()
    }

    @Test func claimsGoByPriorityThenAge() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness(
            [
                """
                name: ordered
                pool: single
                pipeline:
                  - then: note
                    shell: 'cat >> \(out)/order; echo >> \(out)/order'
                """
            ], pools: ["default": 16, "single": 1], start: false)
        try await harness.submit("ordered", input: "low-1", priority: 0)
        try await harness.submit("ordered", input: "high-1", priority: 5)
        try await harness.submit("ordered", input: "low-2", priority: 0)
        try await harness.submit("ordered", input: "high-2", priority: 5)
        try await harness.submit("ordered", input: "mid", priority: 2)
        harness.engine.start()
        let last = try await harness.submit("ordered", input: "last", priority: -1)
        _ = try await harness.resolved(last)
        let order = (try String(contentsOfFile: out + "/order", encoding: .utf8)).split(separator: "\n")
        #expect(order == ["high-1", "high-2", "mid", "low-1", "low-2", "last"])
        await harness.stop()
    }

    @Test func aDelayedJobStartsOnTimeWithoutPolling() async throws {
        let harness = try EngineHarness(
            [
                """
                name: later
                pipeline:
                  - then: now
                    run: [date, "+%s%N"]
                """
            ],
            configure: {
                $0.leaseDuration = .seconds(5)
                $0.renewInterval = .milliseconds(100)
                $0.pollInterval = .seconds(3600)
            })
        // Let the start-up claim find nothing, so only the timer can start the job.
        try await Task.sleep(for: .milliseconds(100))
        let id = try await harness.submit("later", delay: .milliseconds(700))
        let detail = try await harness.resolved(id, within: .seconds(120))
        let ranAt = Double(detail.resultText?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "0") ?? 0
        // Against the job's own run_at, not the test's clock: the test's
        // awaits may resume many seconds late while other tests hold the
        // cooperative pool, and the stage's `date` ran on jobd's threads.
        let delay = ranAt / 1e9 - detail.job.runAt.timeIntervalSince1970
        #expect(delay >= 0, "not before its run_at: \(delay)")
        // The next poll is an hour away: a start within a minute of run_at
        // came from the timer.
        #expect(delay < 60, "on time, not at the next poll (an hour away): \(delay)")
        await harness.stop()
    }

    @Test func drainLeavesJobsResumable() async throws {
        let folder = try makeTemporaryFolder()
        let definition = """
            name: drained
            pipeline:
              - then: quick
                run: [echo, one]
              - then: slow
                shell: 'echo run >> \(folder)/slow-runs; [ -e \(folder)/slept ] || { touch \(folder)/slept; sleep 300 & wait; }; cat'
              - then: finish
                run: [echo, done]
            """
        let first = try EngineHarness([definition], folder: folder, killGrace: .milliseconds(100))
        let id = try await first.submit("drained")
        _ = try await first.waitFor(id) { $0.stage("slow")?.state == .running }
        let started = ContinuousClock.now
        await first.engine.drain(grace: .milliseconds(200))
        // Loose: the test's own clock runs late while other tests hold the cooperative pool.
        #expect(ContinuousClock.now - started < .seconds(120), "stopped early: the processes alone would take 300 s")
        #expect(first.engine.runningCount == 0)
        let parked = try #require(try await first.store.job(id))
        #expect(parked.job.state == .running, "unresolved: resumable")
        #expect(parked.stage("quick")?.state == .fulfilled)
        #expect(parked.stage("slow")?.state == .running, "not recorded as failed")

        let second = try EngineHarness([definition], folder: folder)
        let detail = try await second.resolved(id)
        #expect(detail.job.state == .fulfilled)
        #expect(detail.resultText == "done\n")
        #expect(detail.stage("slow")?.attempts == 2, "the interrupted stage ran again")
        #expect(second.read("slow-runs") == "run\nrun\n")
        await second.stop()
    }

    @Test func statusCountsRunningAndPending() async throws {
        let harness = try EngineHarness(
            [
                """
                name: napper
                pool: single
                pipeline:
                  - then: nap
                    sleep: 600s
                """
            ], pools: ["default": 16, "single": 1])
        let ids = try await harness.submit("napper", count: 3)
        // A nap lasts far longer than the test's awaits can resume late.
        _ = try await harness.waitFor(ids[0]) { $0.stage("nap")?.state == .running }
        let status = try await harness.engine.status()
        #expect(status.running == 1)
        #expect(status.pending == 2)
        await harness.stop()
    }
}
