import Foundation
import JobConfigStore
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

@testable import JobEngine

/// Child jobs (`each`, `then` with `definition:`) on SQLite, through the
/// engine: the join in the store, fail-fast and settle-all, a retried
/// parent, cancellation passed down, limits checked before any child starts.
@Suite struct EngineChildrenTests {
    /// A child that prints its input in upper case, after `delay` for the
    /// item `slow`; it fails with `boom` on the item `bad` unless `flag` exists;
    /// every run appends its input to `runs`.
    static func child(_ folder: String) -> String {
        """
        name: child
        pipeline:
          - then: work
            shell: 'read x; echo "$x" >> \(folder)/runs; if [ "$x" = slow ]; then sleep 30 & wait; fi; if [ "$x" = bad ] && [ ! -e \(folder)/flag ]; then echo boom >&2; exit 3; fi; printf %s "$x" | tr a-z A-Z'
        """
    }

    static func parent(settle: String, maxChildren: Int = 100) -> String {
        """
        name: parent
        pipeline:
          - each: fan
            definition: child
            settle: \(settle)
            max-children: \(maxChildren)
          - then: after
            shell: 'cat'
        """
    }

    /// The engine with its store's local wake-ups followed, as jobd does.
    static func harness(_ yamls: [String]) throws -> (EngineHarness, Task<Void, Never>) {
        let harness = try EngineHarness(yamls, killGrace: .milliseconds(200))
        let follower = Task { await harness.engine.followWakeUps() }
        return (harness, follower)
    }

    @Test func failFastFulfilsWithTheResultsInItemOrder() async throws {
        let folder = try makeTemporaryFolder()
        let (harness, follower) = try Self.harness([Self.child(folder), Self.parent(settle: "fail-fast")])
        defer { follower.cancel() }
        let id = try await harness.submit("parent", input: "a\nb\nc\n")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.resultText == #"["A","B","C"]"#)
        let children = try await harness.store.children(of: id, limit: 10)
        #expect(children.map(\.itemIndex) == [0, 1, 2])
        #expect(children.allSatisfy { $0.parentID == id && $0.parentStage == 0 && $0.state == .fulfilled })
        #expect(detail.job.waitingOn == 0)
        await harness.stop()
    }

    @Test func failFastRejectsWithTheRejectedChildsErrorAndCancelsTheRest() async throws {
        let folder = try makeTemporaryFolder()
        let (harness, follower) = try Self.harness([Self.child(folder), Self.parent(settle: "fail-fast")])
        defer { follower.cancel() }
        let id = try await harness.submit("parent", input: "slow\nbad\nslow\n")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .rejected)
        #expect(detail.job.error?.contains("was rejected") == true, "\(detail.job.error ?? "")")
        #expect(detail.job.error?.contains("boom") == true, "\(detail.job.error ?? "")")
        #expect(detail.stage("fan")?.state == .rejected)
        #expect(detail.stage("after")?.state == .skipped)
        // The slow children are stopped: none is left pending or running.
        let deadline = ContinuousClock.now + .seconds(15)
        var children = try await harness.store.children(of: id, limit: 10)
        while children.contains(where: { !$0.state.isResolved }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            children = try await harness.store.children(of: id, limit: 10)
        }
        #expect(children.map(\.state) == [.cancelled, .rejected, .cancelled])
        await harness.stop()
    }

    @Test func settleAllGivesEveryOutcomeInItemOrder() async throws {
        let folder = try makeTemporaryFolder()
        let (harness, follower) = try Self.harness([Self.child(folder), Self.parent(settle: "all")])
        defer { follower.cancel() }
        let id = try await harness.submit("parent", input: "a\nbad\nc")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        let text = try #require(detail.resultText)
        #expect(text.hasPrefix(#"[{"state":"fulfilled","result":"A"},{"state":"rejected","error":""#), "\(text)")
        #expect(text.contains("boom"), "\(text)")
        #expect(text.hasSuffix(#"{"state":"fulfilled","result":"C"}]"#), "\(text)")
        await harness.stop()
    }

    @Test func aRetriedParentRunsOnlyTheChildrenThatDidNotFulfil() async throws {
        let folder = try makeTemporaryFolder()
        let (harness, follower) = try Self.harness([Self.child(folder), Self.parent(settle: "fail-fast")])
        defer { follower.cancel() }
        let id = try await harness.submit("parent", input: "a\nbad\n")
        let first = try await harness.resolved(id)
        #expect(first.job.state == .rejected)
        // "a" usually fulfils before "bad" rejects; on a loaded machine it may
        // still run then and be stopped as cancelled, and then it is a child
        // that did not fulfil. Once both children have ended, which one is
        // decides what the retry must run again.
        var ended: [Job] = []
        for _ in 0..<300 {
            ended = try await harness.store.children(of: id, limit: 10)
            if ended.allSatisfy(\.state.isResolved) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let firstRuns = try String(contentsOfFile: folder + "/runs", encoding: .utf8).split(separator: "\n")
        let aFulfilled = ended.first { $0.itemIndex == 0 }?.state == .fulfilled
        _ = FileManager.default.createFile(atPath: folder + "/flag", contents: Data())
        _ = try await harness.store.retry(id, delay: .zero)
        harness.engine.nudge()
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.resultText == #"["A","BAD"]"#)
        let runs = try String(contentsOfFile: folder + "/runs", encoding: .utf8)
        let aRuns = firstRuns.filter { $0 == "a" }.count + (aFulfilled ? 0 : 1)
        #expect(
            runs.split(separator: "\n").sorted() == Array(repeating: "a", count: aRuns) + ["bad", "bad"], "\(runs)")
        let children = try await harness.store.children(of: id, limit: 10)
        #expect(children.count == 2)
        await harness.stop()
    }

    @Test func cancellingAWaitingParentCancelsItsChildren() async throws {
        let folder = try makeTemporaryFolder()
        let (harness, follower) = try Self.harness([Self.child(folder), Self.parent(settle: "all")])
        defer { follower.cancel() }
        let id = try await harness.submit("parent", input: "slow\nslow\n")
        let waiting = try await harness.waitFor(id) { $0.job.state == .pending && $0.job.waitingOn == 2 }
        #expect(waiting.stage("fan")?.state == .running)
        #expect(try await harness.store.requestCancellation(of: id) == .cancelled)
        let deadline = ContinuousClock.now + .seconds(15)
        var children = try await harness.store.children(of: id, limit: 10)
        while children.contains(where: { !$0.state.isResolved }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            children = try await harness.store.children(of: id, limit: 10)
        }
        #expect(children.count == 2)
        #expect(children.allSatisfy { $0.state == .cancelled }, "\(children.map(\.state))")
        #expect(try await harness.store.job(id)?.job.state == .cancelled)
        await harness.stop()
    }

    @Test func tooManyItemsRejectTheStageBeforeAnyChildStarts() async throws {
        let folder = try makeTemporaryFolder()
        let (harness, follower) = try Self.harness([
            Self.child(folder), Self.parent(settle: "fail-fast", maxChildren: 2),
        ])
        defer { follower.cancel() }
        let id = try await harness.submit("parent", input: "a\nb\nc\n")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .rejected)
        #expect(
            detail.job.error?.contains("3 items, more than its max-children of 2") == true, "\(detail.job.error ?? "")")
        #expect(try await harness.store.children(of: id, limit: 10).isEmpty)
        await harness.stop()
    }

    @Test func thenWithADefinitionTakesItsOneChildsResult() async throws {
        let folder = try makeTemporaryFolder()
        let (harness, follower) = try Self.harness([
            Self.child(folder),
            """
            name: single
            pipeline:
              - then: one
                definition: child
            """,
        ])
        defer { follower.cancel() }
        let id = try await harness.submit("single", input: "hello")
        let detail = try await harness.resolved(id)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        #expect(detail.resultText == "HELLO")
        await harness.stop()
    }

    @Test func aJobSubmittedAfterAnotherRunsOnceItFulfils() async throws {
        let folder = try makeTemporaryFolder()
        let (harness, follower) = try Self.harness([Self.child(folder)])
        defer { follower.cancel() }
        let first = try await harness.submit("child", input: "one")
        var next = try #require(harness.definitions["child"]).newJob(input: Data("two".utf8))
        next.after = [first]
        let second = try await harness.store.submit(next).id
        let detail = try await harness.resolved(second)
        #expect(detail.job.state == .fulfilled, "\(detail.job.error ?? "")")
        let before = try #require(try await harness.store.job(first)?.job.finishedAt)
        #expect(try #require(detail.job.startedAt) >= before, "started after the first ended")
        await harness.stop()
    }
}
