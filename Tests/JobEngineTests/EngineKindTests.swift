import Foundation
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

@testable import JobEngine

/// Every stage kind and action, through real processes and a real SQLite file.
@Suite struct EngineKindTests {
    @Test func everyKindOnAFulfilledChain() async throws {
        let harness = try EngineHarness([
            """
            name: all-kinds
            pipeline:
              - firstly: read
                run: [cat]
              - then: shout
                shell: "tr a-z A-Z"
              - map: tidy
                transform: trim
              - get: peek
                shell: "cat > /dev/null; echo ignored"
              - tap: look
                shell: "cat > /dev/null; echo tapped"
              - when: both
                all:
                  - run: [cat]
                  - shell: "printf 'b\\\\n'"
              - race: quick
                any:
                  - shell: "sleep 5; echo slow"
                  - run: [cat]
              - map: first
                transform: { json: ".[0]" }
              - recover: unused
                run: [echo, recovered]
              - done: publish
                shell: "cat; printf '!'"
              - catch: alert
                run: [echo, alerted]
              - finally: cleanup
                run: [echo, cleaned]
            """
        ])
        let id = try await harness.submit("all-kinds", input: "  hello  \n")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.resultText == "HELLO!")
        #expect(detail.stage("read")?.text == "  hello  \n")
        #expect(detail.stage("shout")?.text == "  HELLO  \n")
        #expect(detail.stage("tidy")?.text == "HELLO")
        #expect(detail.stage("peek")?.text == "HELLO", "get passes the value through")
        #expect(detail.stage("look")?.text == "HELLO", "tap passes the value through")
        #expect(detail.stage("both")?.text == #"["HELLO","b\n"]"#)
        #expect(detail.stage("quick")?.text == #"["HELLO","b\n"]"#, "race: the first to fulfil")
        #expect(detail.stage("first")?.text == "HELLO")
        #expect(detail.stage("publish")?.text == "HELLO!")
        #expect(detail.stage("cleanup")?.text == "HELLO!")
        #expect(detail.stage("unused")?.state == .skipped)
        #expect(detail.stage("alert")?.state == .skipped)
        #expect(detail.stage("read")?.exitCode == 0)
        for name in ["read", "shout", "tidy", "peek", "look", "both", "quick", "first", "publish", "cleanup"] {
            #expect(detail.stage(name)?.state == .fulfilled, "\(name)")
            #expect(detail.stage(name)?.attempts == 1, "\(name)")
            #expect(detail.stage(name)?.startedAt != nil && detail.stage(name)?.finishedAt != nil, "\(name)")
        }
        await harness.stop()
    }

    @Test func recoverReplacesARejection() async throws {
        let harness = try EngineHarness([
            """
            name: recovering
            pipeline:
              - then: broken
                shell: "echo oops >&2; exit 3"
              - map: never
                transform: upper
              - recover: fallback
                shell: "cat > \\"$OUT\\"; echo fallback"
                env: { OUT: \(try makeTemporaryFolder())/recover-input }
              - then: after
                shell: "tr a-z A-Z"
              - catch: unused
                run: [echo, caught]
            """
        ])
        let id = try await harness.submit("recovering", input: "x")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.resultText == "FALLBACK\n")
        let broken = try #require(detail.stage("broken"))
        #expect(broken.state == .rejected)
        #expect(broken.exitCode == 3)
        #expect(broken.error?.contains("exited with status 3") == true, "\(broken.error ?? "")")
        #expect(broken.error?.contains("oops") == true, "the stderr tail travels with the error")
        #expect(detail.stage("never")?.state == .skipped)
        #expect(detail.stage("fallback")?.state == .fulfilled)
        #expect(detail.stage("unused")?.state == .skipped)
        await harness.stop()
    }

    @Test func catchRunsAndTheJobStaysRejected() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness([
            """
            name: failing
            pipeline:
              - then: broken
                fail: "it broke"
              - then: skipped
                run: [echo, never]
              - ensure: always
                shell: "echo ensure >> \(out)/marks"
              - catch: alert
                shell: "cat > \(out)/caught; echo alerted"
              - finally: cleanup
                shell: "echo finally >> \(out)/marks"
            """
        ])
        let id = try await harness.submit("failing", input: "in")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .rejected)
        #expect(detail.job.error == "it broke")
        #expect(detail.stage("broken")?.state == .rejected)
        #expect(detail.stage("skipped")?.state == .skipped)
        #expect(detail.stage("always")?.state == .fulfilled, "\(detail.stages.map { "\($0.name): \($0.error ?? "")" })")
        #expect(detail.stage("alert")?.state == .fulfilled)
        #expect(detail.stage("alert")?.text == "alerted\n")
        #expect(detail.stage("cleanup")?.state == .fulfilled)
        #expect((try? String(contentsOfFile: out + "/caught", encoding: .utf8)) == "it broke", "catch reads the error")
        #expect((try? String(contentsOfFile: out + "/marks", encoding: .utf8)) == "ensure\nfinally\n")
        await harness.stop()
    }

    @Test func aFailingCleanupStageLeavesTheOutcome() async throws {
        let harness = try EngineHarness([
            """
            name: messy
            pipeline:
              - then: work
                run: [echo, fine]
              - tap: peek
                fail: "tap failed"
              - finally: cleanup
                shell: "exit 4"
            """
        ])
        let id = try await harness.submit("messy")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled)
        #expect(detail.resultText == "fine\n", "no done stage: the last value")
        #expect(detail.stage("peek")?.state == .rejected)
        #expect(detail.stage("cleanup")?.state == .rejected)
        #expect(detail.stage("cleanup")?.exitCode == 4)
        await harness.stop()
    }

    @Test func whenFailsFastAndStopsTheOthers() async throws {
        let out = try makeTemporaryFolder()
        let harness = try EngineHarness([
            """
            name: parallel
            pipeline:
              - when: both
                all:
                  - shell: "echo $$ > \(out)/pid; exec sleep 30"
                  - shell: "sleep 0.3; echo bad >&2; exit 2"
            """
        ])
        let id = try await harness.submit("parallel")
        let detail = try await harness.resolved(id)
        #expect(recordedRunTime(detail) < .seconds(15), "stopped early: the processes alone would take 30 s")
        #expect(detail.job.state == .rejected)
        let error = detail.stage("both")?.error ?? ""
        #expect(error.contains("all[1]") && error.contains("status 2"), "\(error)")
        let pid =
            Int32(
                (try String(contentsOfFile: out + "/pid", encoding: .utf8)).trimmingCharacters(
                    in: .whitespacesAndNewlines)) ?? 0
        try await Task.sleep(for: .milliseconds(300))
        #expect(pid > 0 && !processExists(pid), "the sibling's process was ended")
        await harness.stop()
    }

    @Test func raceTakesTheFirstToFulfilAndReportsEveryFailure() async throws {
        let harness = try EngineHarness([
            """
            name: racing
            pipeline:
              - race: first
                any:
                  - fail: "no luck"
                  - shell: "sleep 0.2; echo second"
                  - shell: "sleep 10; echo late"
            """,
            """
            name: losing
            pipeline:
              - race: first
                any:
                  - fail: "one"
                  - shell: "exit 7"
            """,
        ])
        let winner = try await harness.resolved(try await harness.submit("racing"))
        #expect(winner.resultText == "second\n")
        let loser = try await harness.resolved(try await harness.submit("losing"))
        #expect(loser.job.state == .rejected)
        let error = loser.job.error ?? ""
        #expect(error.contains("one") && error.contains("status 7"), "\(error)")
        await harness.stop()
    }

    @Test func sleepPassesTheValueOnAndTransformsWork() async throws {
        let harness = try EngineHarness([
            """
            name: slow-json
            pipeline:
              - then: wait
                sleep: 150ms
              - map: pick
                transform: { json: ".items[1].name" }
              - map: up
                transform: upper
              - map: down
                transform: lower
            """
        ])
        let started = ContinuousClock.now
        let id = try await harness.submit("slow-json", input: #"{"items": [{"name": "a"}, {"name": "Bob"}]}"#)
        let detail = try await harness.resolved(id)
        #expect(ContinuousClock.now - started >= .milliseconds(150))
        #expect(detail.stage("wait")?.text == #"{"items": [{"name": "a"}, {"name": "Bob"}]}"#)
        #expect(detail.stage("up")?.text == "BOB")
        #expect(detail.resultText == "bob")
        let bad = try await harness.resolved(try await harness.submit("slow-json", input: "not json"))
        #expect(bad.job.state == .rejected)
        #expect(bad.stage("pick")?.state == .rejected)
        #expect(bad.stage("up")?.state == .skipped)
        await harness.stop()
    }

    @Test func actionsSeeTheirEnvironmentAndDirectory() async throws {
        let work = try makeTemporaryFolder()
        let harness = try EngineHarness([
            """
            name: env
            env: { COLOR: blue }
            cwd: \(work)
            pipeline:
              - then: show
                shell: 'printf "%s %s %s %s %s %s" "$JOBD_JOB_ID" "$JOBD_STAGE" "$JOBD_ATTEMPT" "$COLOR" "$SIZE" "$(pwd)"'
                env: { SIZE: large }
            """
        ])
        let id = try await harness.submit("env")
        let detail = try await harness.resolved(id)
        #expect(detail.resultText == "\(id) show 1 blue large \(work)")
        await harness.stop()
    }
}
