import Foundation
import JobValues
import Testing

@testable import JobStore
@_spi(Maintenance) @testable import JobStorePostgres
@_spi(Maintenance) @testable import JobStoreSQLite

@Suite struct QueryTests {
    /// 30 jobs over 3 definitions: ids 1…30; every 3rd fulfilled, every 5th running, the rest pending.
    func populated(_ kind: StoreKind) async throws -> (any StoreUnderTest, StoreScope, [Int64: JobState]) {
        let (store, folder) = try await makeStore(kind)
        var states: [Int64: JobState] = [:]
        let ids = try await store.submit((0..<30).map { job("def-\($0 % 3)", input: "\($0)") }).map(\.id)
        for id in ids { states[id] = .pending }
        try await store.executeInWriteTransaction(
            """
            UPDATE jobs SET state = 'fulfilled', finished_at = '2020-01-01T00:00:00.000Z' WHERE id % 3 = 0;
            UPDATE jobs SET state = 'running', lease_owner = 'x', lease_expires_at = '2999-01-01T00:00:00.000Z'
                WHERE id % 5 = 0 AND id % 3 <> 0;
            """)
        for id in ids where id % 3 == 0 { states[id] = .fulfilled }
        for id in ids where id % 5 == 0 && id % 3 != 0 { states[id] = .running }
        return (store, folder, states)
    }

    /// The key and creation-time filters, on the list and on the search,
    /// alone and beside a state (the SQLite list's per-state ranges).
    @Test(arguments: StoreKind.allCases)
    func listsAndSearchesByKeyAndCreationTime(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        let search = try #require(store as? any JobSearchStore)
        let ids = try await store.submit([
            job(input: "alpha one"), job(input: "alpha two", key: "k-2"), job(input: "alpha three", key: "k-3"),
        ]).map(\.id)
        try await store.executeInWriteTransaction(
            """
            UPDATE jobs SET created_at = '2020-01-01T00:00:00.000Z' WHERE id = \(ids[0]);
            UPDATE jobs SET created_at = '2021-01-01T00:00:00.000Z' WHERE id = \(ids[1]);
            UPDATE jobs SET created_at = '2022-01-01T00:00:00.000Z' WHERE id = \(ids[2]);
            """)
        func date(_ year: Int) -> Date {
            Date(timeIntervalSince1970: [2020: 1_577_836_800, 2021: 1_609_459_200, 2022: 1_640_995_200][year]!)
        }
        let mid2020 = date(2020).addingTimeInterval(180 * 86400)
        let cases: [(JobQuery, [Int64])] = [
            (JobQuery(createdSince: date(2021)), [ids[2], ids[1]]),
            (JobQuery(createdUntil: date(2021)), [ids[0]]),
            (JobQuery(createdSince: mid2020, createdUntil: date(2022)), [ids[1]]),
            (JobQuery(key: "k-3"), [ids[2]]),
            (JobQuery(states: [.pending], key: "k-2"), [ids[1]]),
            (JobQuery(states: [.pending, .running], createdSince: date(2021), limit: 1), [ids[2]]),
            (JobQuery(definition: "report", createdUntil: mid2020), [ids[0]]),
            (JobQuery(states: [.fulfilled], createdSince: date(2020)), []),
        ]
        for (query, expected) in cases {
            #expect(try await store.list(query).jobs.map(\.id) == expected, "list \(query)")
            #expect(try await search.search("alpha", query).jobs.map(\.id) == expected, "search \(query)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func listsNewestFirstWithFilters(_ kind: StoreKind) async throws {
        let (store, scope, states) = try await populated(kind)
        _ = scope
        let all = try await store.list(JobQuery(limit: 100))
        #expect(all.jobs.map(\.id) == states.keys.sorted(by: >))
        #expect(all.nextCursor == nil)

        let pending = try await store.list(.pending(limit: 100))
        #expect(pending.jobs.map(\.id) == states.filter { JobState.pendingSet.contains($0.value) }.keys.sorted(by: >))
        let resolved = try await store.list(.resolved(limit: 100))
        #expect(resolved.jobs.map(\.id) == states.filter { $0.value == .fulfilled }.keys.sorted(by: >))
        let running = try await store.list(JobQuery(states: [.running], limit: 100))
        #expect(running.jobs.map(\.id) == states.filter { $0.value == .running }.keys.sorted(by: >))

        let ofDefinition = try await store.list(JobQuery(definition: "def-1", limit: 100))
        #expect(ofDefinition.jobs.allSatisfy { $0.definition == "def-1" })
        #expect(ofDefinition.jobs.count == 10)
        #expect(ofDefinition.jobs.map(\.id) == ofDefinition.jobs.map(\.id).sorted(by: >))
        let pendingOfDefinition = try await store.list(.pending(definition: "def-2", limit: 100))
        #expect(pendingOfDefinition.jobs.allSatisfy { $0.definition == "def-2" && !$0.state.isResolved })
        #expect(pendingOfDefinition.jobs.count == states.filter { ($0.key - 1) % 3 == 2 && !$0.value.isResolved }.count)
    }

    /// A list without values reads no input or result and the error's start
    /// only; the same jobs, in the same order, with every other field.
    @Test(arguments: StoreKind.allCases)
    func aListWithoutValuesLeavesOutInputResultAndMostOfTheError(_ kind: StoreKind) async throws {
        let (store, scope, _) = try await populated(kind)
        _ = scope
        let long = String(repeating: "é", count: JobQuery.summaryErrorCharacters + 10)
        try await store.executeInWriteTransaction(
            """
            UPDATE jobs SET result = 'a result', error = '\(long)' WHERE id % 3 = 0;
            """)
        #expect(try await store.list(JobQuery(limit: 100)).jobs.contains { $0.result != nil && $0.error == long })
        for query in [JobQuery(limit: 100), .resolved(limit: 5), JobQuery(definition: "def-0", limit: 100)] {
            var summary = query
            summary.values = false
            let whole = try await store.list(query).jobs
            let listed = try await store.list(summary).jobs
            #expect(listed.map(\.id) == whole.map(\.id))
            #expect(whole.contains { $0.input != nil })
            #expect(listed.allSatisfy { $0.input == nil && $0.result == nil })
            for (job, full) in zip(listed, whole) {
                #expect(job.error == full.error.map { String($0.prefix(JobQuery.summaryErrorCharacters)) })
                var same = job
                (same.input, same.result, same.error) = (full.input, full.result, full.error)
                #expect(same == full, "every other field as read whole")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func pagesFollowTheCursorWithoutGapsOrRepeats(_ kind: StoreKind) async throws {
        let (store, scope, states) = try await populated(kind)
        _ = scope
        for query in [
            JobQuery(limit: 7), .pending(limit: 4), .resolved(limit: 3), JobQuery(definition: "def-0", limit: 2),
        ] {
            var seen: [Int64] = []
            var next: JobQuery? = query
            while let current = next {
                let page = try await store.list(current)
                #expect(page.jobs.count <= query.limit)
                seen += page.jobs.map(\.id)
                next = page.nextCursor.map { cursor in
                    var following = current
                    following.before = cursor
                    return following
                }
            }
            let expected = states.filter { id, state in
                (query.states?.contains(state) ?? true)
                    && (query.definition.map { "def-\((id - 1) % 3)" == $0 } ?? true)
            }.keys.sorted(by: >)
            #expect(seen == expected, "\(query)")
        }
        await expectStoreError(.invalidArgument) { try await store.list(JobQuery(limit: 0)) }
    }

    @Test(arguments: StoreKind.allCases)
    func missingJobIsNil(_ kind: StoreKind) async throws {
        let (store, scope) = try await makeStore(kind)
        _ = scope
        #expect(try await store.job(42) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func viewsShowPendingAndResolvedSets(_ kind: StoreKind) async throws {
        let (store, scope, states) = try await populated(kind)
        _ = scope
        #expect(
            try await store.count("SELECT count(*) FROM pending_jobs") == states.values.filter { !$0.isResolved }.count)
        #expect(try await store.count("SELECT count(*) FROM resolved_jobs") == states.values.filter(\.isResolved).count)
    }

    /// The plans SQLite picks for the hot queries use the indexes: no scan
    /// of the table and no sort of it — what keeps them flat on 1M jobs.
    @Test(arguments: [
        JobQuery.pending(), .resolved(), .pending(before: 1000), JobQuery(states: [.rejected]),
        JobQuery(definition: "def-1"), .pending(definition: "def-1", before: 77), JobQuery(),
    ])
    func listUsesIndexes(_ query: JobQuery) async throws {
        let (store, folder) = try makeStore()
        _ = folder
        let plan = try await store.listQueryPlan(query)
        // Never a scan of the table, never a sort.
        #expect(!plan.contains { $0.hasPrefix("SCAN jobs") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        if query.states == nil && query.definition == nil {
            // A waiting parent's live count, when the page carries it: its
            // countdown row by key.
            let countdown = ["CORRELATED SCALAR SUBQUERY 1", "SEARCH job_joins USING INTEGER PRIMARY KEY (rowid=?)"]
            #expect(
                plan == ["SEARCH jobs USING INTEGER PRIMARY KEY (rowid<?)"]
                    || plan == ["SEARCH jobs USING INTEGER PRIMARY KEY (rowid<?)"] + countdown, "\(plan)")
        } else {
            // The page's rows by key, from one bounded index range per state.
            #expect(plan.first == "SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)", "\(plan)")
            let index =
                query.definition == nil
                ? "jobs_state (state=? AND id<?)" : "jobs_definition_state (definition=? AND state=? AND id<?)"
            let ranges = plan.filter { $0.hasPrefix("SEARCH jobs USING COVERING INDEX") }
            #expect(ranges.count == (query.states ?? Set(JobState.allCases)).count, "\(plan)")
            #expect(ranges.allSatisfy { $0.hasSuffix(index) }, "\(plan)")
        }
    }

    @Test func claimRequeueAndStagesUseIndexes() async throws {
        let (store, folder) = try makeStore()
        _ = folder
        let claim = try await store.queryPlan(
            """
            SELECT id FROM jobs WHERE state = 'pending' AND waiting_on = 0 AND pool = 'default' AND run_at <= '2030'
            ORDER BY priority DESC, run_at, id LIMIT 16
            """)
        #expect(claim.contains { $0.contains("jobs_claim") }, "\(claim)")
        #expect(!claim.contains { $0.contains("TEMP B-TREE") }, "\(claim)")
        let requeue = try await store.queryPlan(
            "SELECT id FROM jobs WHERE state = 'running' AND lease_expires_at < '2030'")
        // Running jobs are few (at most the pools' sizes): the state index finds them.
        #expect(requeue.contains { $0.contains("jobs_state") }, "\(requeue)")
        let stages = try await store.queryPlan("SELECT * FROM stages WHERE job_id = 5 ORDER BY position")
        #expect(stages.contains { $0.contains("SEARCH stages USING PRIMARY KEY (job_id=?)") }, "\(stages)")
        #expect(!stages.contains { $0.contains("TEMP B-TREE") }, "\(stages)")
    }
}
