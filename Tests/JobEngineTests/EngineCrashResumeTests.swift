import Foundation
import JobProcesses
import JobStore
import JobStoreSQLite
import Synchronization
import TestSupport
import Testing

@testable import JobEngine

/// A child process runs an engine and is killed with SIGKILL mid-run; a new
/// engine on the same database finishes every job, never re-running a
/// fulfilled stage. The stage in flight at the crash runs again, unless it
/// is marked `idempotent: false`: then the job fails as interrupted.
@Suite struct EngineCrashResumeTests {
    static func definitions(_ folder: String) -> [String] {
        let mark = folder + "/marks"
        let gate = folder + "/crashed"
        func pipeline(_ name: String, idempotent: Bool) -> String {
            """
            name: \(name)
            pipeline:
              - then: s0
                shell: 'echo "$JOBD_JOB_ID s0" >> \(mark); cat'
              - then: s1
                shell: 'echo "$JOBD_JOB_ID s1" >> \(mark); while [ ! -e \(gate) ]; do sleep 0.05; done; cat'
                idempotent: \(idempotent)
              - map: s2
                transform: upper
              - done: s3
                shell: 'echo "$JOBD_JOB_ID s3" >> \(mark); cat'
              - catch: s4
                shell: 'echo "$JOBD_JOB_ID s4" >> \(mark)'
            """
        }
        return [pipeline("resumable", idempotent: true), pipeline("fragile", idempotent: false)]
    }

    @Test func aKilledEngineLosesNoJobAndReRunsNoFulfilledStage() async throws {
        let folder = try makeTemporaryFolder()
        let definitions = Self.definitions(folder)
        try FileManager.default.createDirectory(atPath: folder + "/jobs.d", withIntermediateDirectories: true)
        try write(definitions[0], to: folder + "/jobs.d/resumable.yaml")
        try write(definitions[1], to: folder + "/jobs.d/fragile.yaml")

        // Submit with a store of our own, then let the child run the jobs.
        let submitter = try EngineHarness(definitions, folder: folder, start: false)
        var resumable: [Int64] = []
        var fragile: [Int64] = []
        for index in 0..<4 { resumable.append(try await submitter.submit("resumable", input: "job \(index)")) }
        for index in 0..<3 { fragile.append(try await submitter.submit("fragile", input: "fragile \(index)")) }

        let exited = Mutex<Bool>(false)
        let worker = ProcessRunner().run(
            ProcessSpec(
                .argv([workerPath, folder + "/jobd.sqlite", folder + "/jobs.d", "--lease-ms", "1000"]))
        ) { _ in
            exited.withLock { $0 = true }
        }
        // Mid-run: every job has finished s0 and is inside s1.
        for id in resumable + fragile {
            _ = try await submitter.waitFor(id) { $0.stage("s1")?.state == .running }
        }
        #expect(!exited.withLock { $0 }, "the worker runs")
        worker.terminate(grace: .zero)  // SIGKILL, no SIGTERM: a crash
        while !exited.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        try write("", to: folder + "/crashed")

        for id in resumable + fragile {
            let detail = try #require(try await submitter.store.job(id))
            #expect(detail.job.state == .running, "job \(id) is left running by the dead worker")
            #expect(detail.stage("s0")?.state == .fulfilled)
        }

        // A new engine on the same database takes over once the leases expire.
        let successor = try EngineHarness(definitions, folder: folder)
        for (index, id) in resumable.enumerated() {
            let detail = try await successor.resolved(id)
            #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
            #expect(detail.resultText == "JOB \(index)")
            #expect(detail.stage("s1")?.attempts == 2, "the stage in flight ran again")
            #expect(detail.job.claims == 2)
        }
        for id in fragile {
            let detail = try await successor.resolved(id)
            #expect(detail.job.state == .rejected)
            #expect(detail.job.error?.contains("interrupted") == true, "\(detail.job.error ?? "")")
            #expect(detail.job.error?.contains("idempotent: false") == true)
            #expect(detail.stage("s1")?.state == .rejected)
            #expect(detail.stage("s2")?.state == .skipped)
            #expect(detail.stage("s3")?.state == .skipped)
            #expect(detail.stage("s4")?.state == .fulfilled, "catch still runs")
        }
        let events = try await successor.store.events(of: resumable[0])
        #expect(events.contains { $0.kind == "requeued" })

        // Which stages ran how many times, from the processes' own marks.
        let marks = successor.read("marks").split(separator: "\n").map(String.init)
        func runs(_ id: Int64, _ stage: String) -> Int { marks.filter { $0 == "\(id) \(stage)" }.count }
        for id in resumable {
            #expect(runs(id, "s0") == 1, "a fulfilled stage never runs again (job \(id))")
            #expect(runs(id, "s1") == 2, "at-least-once for the stage in flight (job \(id))")
            #expect(runs(id, "s3") == 1)
            #expect(runs(id, "s4") == 0)
        }
        for id in fragile {
            #expect(runs(id, "s0") == 1)
            #expect(runs(id, "s1") == 1, "a non-idempotent stage is not run again (job \(id))")
            #expect(runs(id, "s3") == 0)
            #expect(runs(id, "s4") == 1)
        }
        await successor.stop()
    }
}
