import Foundation
import JobConfig
import JobConfigStore
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

@testable import JobEngine

/// `Engine.reload` (SIGHUP): new definitions, queues and pool sizes apply to
/// jobs started afterwards; running jobs keep what they started with.
@Suite struct EngineReloadTests {
    @Test func aReloadAddsDefinitionsAndChangesRunningOnes() async throws {
        let harness = try EngineHarness([
            """
            name: greet
            pipeline:
              - map: shout
                transform: upper
            """
        ])
        let before = try await harness.resolved(try await harness.submit("greet", input: "hi"))
        #expect(before.resultText == "HI")

        // The new set: `greet` now lowercases, and `added` exists.
        let loader = DefinitionLoader(context: harness.definitionContext)
        let greet = try loader.parse(
            yaml: "name: greet\npipeline:\n  - map: quiet\n    transform: lower\n", path: harness.file("greet.yaml")
        ).get()
        let added = try loader.parse(
            yaml: "name: added\npipeline:\n  - map: trim\n    transform: trim\n", path: harness.file("added.yaml")
        ).get()
        harness.engine.reload(harness.configuration, definitions: [greet, added])

        let changed = try await harness.store.submit(greet.newJob(input: Data("MiXeD".utf8))).id
        let fresh = try await harness.store.submit(added.newJob(input: Data("  padded  ".utf8))).id
        harness.engine.nudge()
        #expect(try await harness.resolved(changed).resultText == "mixed")
        #expect(try await harness.resolved(fresh).resultText == "padded")
        await harness.stop()
    }

    @Test func aJobRunningDuringAReloadKeepsItsDefinition() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness([
            """
            name: slow
            pipeline:
              - then: wait
                shell: 'touch \(out)/started; sleep 0.6; echo old'
              - map: shout
                transform: upper
            """
        ])
        let id = try await harness.submit("slow")
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: out + "/started"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let loader = DefinitionLoader(context: harness.definitionContext)
        let replacement = try loader.parse(
            yaml: "name: slow\npipeline:\n  - then: other\n    shell: 'echo new'\n", path: harness.file("slow.yaml")
        ).get()
        harness.engine.reload(harness.configuration, definitions: [replacement])
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled)
        #expect(detail.resultText == "OLD\n")
        #expect(detail.stages.map(\.name) == ["wait", "shout"])
        await harness.stop()
    }

    @Test func aPoolThatGrowsClaimsMoreAtOnce() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness(
            [
                """
                name: hold
                pool: narrow
                pipeline:
                  - then: wait
                    shell: 'cat > \(out)/$JOBD_JOB_ID.running; while [ ! -e \(out)/go ]; do sleep 0.02; done'
                """
            ], pools: ["default": 16, "narrow": 1])
        var ids: [Int64] = []
        for _ in 0..<3 { ids.append(try await harness.submit("hold")) }
        func runningFiles() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter { $0.hasSuffix(".running") }
                .count
        }
        try await Task.sleep(for: .milliseconds(400))
        #expect(runningFiles() == 1, "a pool of 1 runs one job")

        var bigger = harness.configuration
        bigger.pools["narrow"] = 3
        harness.engine.reload(bigger, definitions: Array(harness.definitions.values))
        let deadline = ContinuousClock.now + .seconds(20)
        while runningFiles() < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(runningFiles() == 3, "after growing to 3, all three run at once")
        #expect(try await harness.engine.status().runningByPool["narrow"] == 3)
        #expect(FileManager.default.createFile(atPath: out + "/go", contents: nil))
        for id in ids { #expect(try await harness.resolved(id).job.state == .fulfilled) }
        await harness.stop()
    }
}
