import Foundation
import Testing

@_spi(Maintenance) @testable import JobStore

/// Operator actions over a selection (`JobActionStore`): batches, resuming, the audit trail.
@Suite struct ActionTests {
    let alice = ActionActor(name: "alice", uid: 1000, origin: "jobctl on test")

    @Test(arguments: StoreKind.allCases)
    func anInterruptedRetryIsFinishedOnceEvenWhenItsJobsFailAgain(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let actions = try #require(store as? any JobActionStore)
        let ids = try await submit(12, to: store)
        try await resolve(ids.count, as: .rejected, store)
        let selection = JobSelection(states: [.rejected], definition: "report")
        let (count, highest) = try await actions.countMatching(selection, for: .retry, ids: 1...Int64.max)
        #expect(count == 12)
        var action = try await actions.startAction(
            ActionStart(
                verb: .retry, actor: alice, filter: "--state rejected --definition report", selection: selection,
                matched: count, highestID: highest))
        // Two batches, then the run stops; an engine runs the retried jobs and they fail again.
        action = try await actions.continueAction(action.id, batchSize: 5)
        action = try await actions.continueAction(action.id, batchSize: 5)
        #expect(action.changed == 10 && !action.isFinished)
        try await resolve(10, as: .rejected, store)
        #expect(try await actions.countMatching(selection, for: .retry, ids: 1...Int64.max).count == 12)

        // The next run finds the unfinished action by its verb and filter, and changes only what is left.
        let resumed = try #require(
            try await actions.unfinishedAction(.retry, filter: "--state rejected --definition report"))
        #expect(resumed.id == action.id && resumed.lastID == ids[9])
        action = resumed
        while !action.isFinished { action = try await actions.continueAction(action.id, batchSize: 5) }
        #expect(action.changed == 12 && action.matched == 12)
        #expect(try await actions.unfinishedAction(.retry, filter: "--state rejected --definition report") == nil)

        for id in ids {
            #expect(try await store.job(id)?.job.attempt == 2, "job \(id)")
            let events = try await store.events(of: id).filter { $0.kind == ActionRecord.eventKind }
            #expect(events.map(\.message) == ["retried by alice (uid 1000) via jobctl on test (action \(action.id))"])
        }
        #expect(try await store.count("SELECT count(*) FROM events WHERE action_id = \(action.id)") == 12)
        #expect(try await store.count("SELECT count(*) FROM job_attempts") == 12)
    }

    /// `--parent`: only that job's children, and the selection is kept with
    /// the action, so a resumed run still takes only them.
    @Test(arguments: StoreKind.allCases)
    func aParentSelectsOnlyItsChildrenAndIsKeptForTheResume(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let actions = try #require(store as? any JobActionStore)
        let parentID = try await store.submit(NewJob(definition: "parent", input: nil, stages: threeStages)).id
        let parent = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(30)).first)
        #expect(parent.lease.jobID == parentID)
        let other = try await submit(3, to: store)
        #expect(
            try await ChildJoinTests.join(store, parent, ["a", "b", "c", "d"]) == .waiting(children: 4))
        let selection = JobSelection(states: [.pending], parentID: parentID)
        let (count, highest) = try await actions.countMatching(selection, for: .cancel, ids: 1...Int64.max)
        #expect(count == 4)
        let filter = "--state pending --parent \(parentID)"
        var action = try await actions.startAction(
            ActionStart(
                verb: .cancel, actor: alice, filter: filter, selection: selection, matched: count,
                highestID: highest))
        action = try await actions.continueAction(action.id, batchSize: 2)
        #expect(action.changed == 2 && !action.isFinished)
        let resumed = try #require(try await actions.unfinishedAction(.cancel, filter: filter))
        #expect(resumed.selection.parentID == parentID)
        action = resumed
        while !action.isFinished { action = try await actions.continueAction(action.id, batchSize: 2) }
        #expect(action.changed == 4)
        let children = try await store.children(of: parentID, limit: 10)
        #expect(children.count == 4 && children.allSatisfy { $0.state == .cancelled })
        for id in other { #expect(try await store.job(id)?.job.state == .pending, "job \(id)") }
        // Its children ended: the waiting parent is claimable again, to settle its stage.
        let claimed = try await store.claim(pool: "default", owner: "e", limit: 10, leaseDuration: .seconds(30))
        #expect(claimed.contains { $0.lease.jobID == parentID })
    }

    @Test(arguments: StoreKind.allCases)
    func cancelTakesPendingAndRunningJobsAndDeleteOnlyResolvedOnes(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let actions = try #require(store as? any JobActionStore)
        let ids = try await submit(6, to: store)
        try await resolve(2, as: .fulfilled, store)
        let running = try #require(
            try await store.claim(pool: "default", owner: "e", limit: 1, leaseDuration: .seconds(60)).first)
        // 2 fulfilled, 1 running, 3 pending.
        let cancel = try await runToTheEnd(.cancel, JobSelection(), actions)
        #expect(cancel.matched == 4 && cancel.changed == 4)
        #expect(try await store.job(running.lease.jobID)?.job.state == .running)
        #expect(try await store.job(running.lease.jobID)?.job.cancelRequested == true)
        #expect(try await store.countJobs(in: [.cancelled])[.cancelled] == 3)

        try await store.finish(JobFinish(lease: running.lease, outcome: .cancelled("cancelled")))
        let delete = try await runToTheEnd(.delete, JobSelection(states: [.cancelled, .pending]), actions)
        #expect(delete.changed == 4)
        #expect(try await store.countJobs(in: Set(JobState.allCases)).values.reduce(0, +) == 2)
        #expect(try await store.job(ids[0])?.job.state == .fulfilled)
        #expect(try await store.count("SELECT count(*) FROM stages") == 2 * threeStages.count)
        let recorded = try await actions.actions(limit: 10, before: nil)
        #expect(recorded.map(\.verb) == [.delete, .cancel])
        #expect(recorded.allSatisfy { $0.isFinished && $0.actor == alice })
    }

    @Test(arguments: StoreKind.allCases)
    func theFilterSelectsByDefinitionKeyAndCreationTime(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let actions = try #require(store as? any JobActionStore)
        _ = try await store.submit([job("a", key: "k1"), job("a", key: "k2"), job("b", key: "k1")])
        let all = 1...Int64.max
        #expect(try await actions.countMatching(JobSelection(definition: "a"), for: .cancel, ids: all).count == 2)
        #expect(try await actions.countMatching(JobSelection(key: "k1"), for: .cancel, ids: all).count == 2)
        #expect(
            try await actions.countMatching(JobSelection(definition: "a", key: "k1"), for: .cancel, ids: all).count == 1
        )
        #expect(try await actions.countMatching(JobSelection(definition: "a"), for: .retry, ids: all).count == 0)
        #expect(try await actions.countMatching(JobSelection(states: [.rejected]), for: .cancel, ids: all).count == 0)
        let hourAgo = Date().addingTimeInterval(-3600)
        #expect(try await actions.countMatching(JobSelection(createdSince: hourAgo), for: .cancel, ids: all).count == 3)
        #expect(try await actions.countMatching(JobSelection(createdUntil: hourAgo), for: .cancel, ids: all).count == 0)
        #expect(try await actions.countMatching(JobSelection(jobID: 2), for: .cancel, ids: all).count == 1)
        #expect(try await actions.countMatching(JobSelection(), for: .cancel, ids: 2...3).count == 2)
        #expect(try await actions.idsMatching(JobSelection(key: "k1"), for: .cancel, after: 0, limit: 10) == [1, 3])
        // Text that looks like SQL is a value like any other.
        #expect(
            try await actions.countMatching(JobSelection(definition: "a' OR '1'='1"), for: .cancel, ids: all).count == 0
        )
    }

    @Test(arguments: StoreKind.allCases)
    func anActionOnOneJobIsRecordedWithItsEvent(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let actions = try #require(store as? any JobActionStore)
        let id = try await store.submit(job()).id
        #expect(try await store.requestCancellation(of: id) == .cancelled)
        let action = try await actions.recordSingleAction(.cancel, job: id, by: alice)
        #expect(action.selection.jobID == id && action.filter == "job \(id)" && action.isFinished)
        #expect(try await store.events(of: id).map(\.message) == [action.eventMessage])
        #expect(try await actions.actions(limit: 5, before: nil) == [action])
    }

    // MARK: Helpers

    private func submit(_ count: Int, to store: any StoreUnderTest) async throws -> [Int64] {
        try await store.submit((0..<count).map { _ in job() }).map(\.id)
    }

    /// Claims and ends the `count` oldest runnable jobs, as an engine would.
    private func resolve(_ count: Int, as state: JobState, _ store: any StoreUnderTest) async throws {
        let claimed = try await store.claim(pool: "default", owner: "e", limit: count, leaseDuration: .seconds(60))
        #expect(claimed.count == count)
        for job in claimed {
            let outcome: JobOutcome = state == .fulfilled ? .fulfilled(Data("ok".utf8)) : .rejected("bad total")
            try await store.finish(JobFinish(lease: job.lease, outcome: outcome))
        }
    }

    private func runToTheEnd(
        _ verb: ActionVerb, _ selection: JobSelection, _ actions: any JobActionStore
    ) async throws
        -> ActionRecord
    {
        let (count, highest) = try await actions.countMatching(selection, for: verb, ids: 1...Int64.max)
        var action = try await actions.startAction(
            ActionStart(
                verb: verb, actor: alice, filter: "test", selection: selection, matched: count, highestID: highest))
        while !action.isFinished { action = try await actions.continueAction(action.id, batchSize: 3) }
        return action
    }
}
