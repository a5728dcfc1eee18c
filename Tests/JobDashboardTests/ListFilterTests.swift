import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import Testing

@testable import JobDashboard

/// The list's filter: state, definition, key, creation time and search, all
/// in the URL; the selection's actions act on exactly what the list shows.
@Suite struct ListFilterTests {
    @Test func theURLHoldsTheWholeFilter() throws {
        let query = [
            ("state", "rejected"), ("definition", "report"), ("key", "k 1"), ("since", "1h"),
            ("until", "2026-11-24T09:00:00Z"), ("match", "disk full"), ("limit", "20"),
        ]
        let request = try JobListRequest(query: query)
        #expect(request.isFiltered)
        let link = request.link(before: 7)
        #expect(
            link
                == "?state=rejected&definition=report&key=k%201&since=1h&until=2026-11-24T09%3A00%3A00Z&match=disk%20full&limit=20&before=7"
        )
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let jobQuery = request.jobQuery(now: now)
        #expect(jobQuery.key == "k 1" && jobQuery.definition == "report" && jobQuery.states == [.rejected])
        #expect(jobQuery.createdSince == now.addingTimeInterval(-3600))
        #expect(jobQuery.createdUntil == Date(timeIntervalSince1970: 1_795_510_800))
        // A bulk action's form carries the times as instants, counted when it was shown.
        let pinned = request.pinned(now: now)
        #expect(pinned.since?.text == "2027-01-15T07:00:00Z" && pinned.until?.text == "2026-11-24T09:00:00Z")
        // An empty search box is no filter.
        #expect(!(try JobListRequest(query: [("match", "  ")])).isFiltered)
    }

    @Test(arguments: [
        ("since", "yesterday", "since must be an RFC 3339 time"),
        ("until", "2026-13-01T00:00:00Z", "until must be an RFC 3339 time"),
        ("match", "*** --", "a search needs at least one word"),
        ("key", String(repeating: "k", count: 201), "key takes at most 200 characters"),
    ])
    func aBadFilterSaysWhatToPass(_ name: String, _ value: String, _ message: String) async throws {
        #expect(throws: DashboardRequestError.self) { try JobListRequest(query: [(name, value)]) }
        let page = await Dashboard(source: FixedSource()).jobsPage(query: [(name, value)])
        #expect(page.status == .badRequest)
        #expect(page.html.contains(message), "\(page.html)")
    }

    /// Every field the form reflects, and the selection's links, escaped.
    @Test(arguments: [Hostile.script, Hostile.attribute])
    func reflectedFilterValuesAreEscaped(_ value: String) async throws {
        let job = makeJob(1, state: .rejected, error: "\(value) failed")
        let dashboard = Dashboard(source: FixedSource(jobs: [job]))
        for name in ["definition", "key", "match"] {
            let page = await dashboard.jobsPage(query: [(name, value)])
            #expect(page.status == .ok, "\(name)")
            #expect(page.html.contains("name=\"\(name)\" value=\"\(HTML.escape(value))\""), "\(name)")
            #expect(!page.html.lowercased().contains("<script") && !page.html.contains("onmouseover=\""), "\(name)")
        }
        // The search found the job by its error's words.
        #expect((await dashboard.jobsPage(query: [("match", value)])).html.contains("href=\"jobs/1\""))
        for name in ["since", "until"] {
            let page = await dashboard.jobsPage(query: [(name, value)])
            #expect(page.status == .badRequest)
            #expect(!page.html.lowercased().contains("<script") && !page.html.contains("onmouseover=\""), "\(name)")
        }
    }

    /// A dashboard over a real store: the list and the bulk action read the
    /// same selection through the store's search and filters.
    @Test func theSelectionsActionChangesExactlyTheListedJobs() async throws {
        let folder = NSTemporaryDirectory() + "dashboard-filter-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try SQLiteJobStore(path: folder + "/jobs.sqlite")
        let inputs = ["disk full on /var", "disk full on /srv", "network down", "disk full on /tmp"]
        let ids = try await store.submit(
            inputs.enumerated().map { index, input in
                NewJob(
                    definition: "report", input: Data(input.utf8), idempotencyKey: "k-\(index)",
                    stages: [StagePlan(name: "fetch", kind: "then")])
            }
        ).map(\.id)
        // The last one was created two hours ago: outside `since=1h`.
        try await store.executeInWriteTransaction(
            "UPDATE jobs SET created_at = '\(Timestamp.text(Date().addingTimeInterval(-7200)))' WHERE id = \(ids[3])")
        let source = StoreDashboardSource(store: store) {
            DashboardSnapshot(pools: [], build: BuildInfo(version: "t", node: "n"))
        }
        let dashboard = Dashboard(source: source, actions: DashboardActions(store))
        let filter = [("state", "pending"), ("since", "1h"), ("match", "DISK full")]
        let forms = ActionForms(csrf: "t")

        let list = await dashboard.jobsPage(query: filter, forms: forms)
        let listed = list.html.matches(of: /href="jobs\/(\d+)"/).map { Int64($0.1)! }
        #expect(listed == [ids[1], ids[0]], "\(list.html)")
        #expect(list.html.contains("href=\"actions?verb=cancel&amp;state=pending&amp;since=1h&amp;match=DISK%20full\""))
        let confirm = await dashboard.confirmationPage(query: [("verb", "cancel")] + filter, forms: forms)
        #expect(confirm.html.contains("Cancel 2 jobs?"), "\(confirm.html)")
        #expect(confirm.html.contains("name=\"match\" value=\"DISK full\""))
        // The confirmation's form holds the time as an instant.
        #expect(
            !confirm.html.contains("name=\"since\" value=\"1h\"") && confirm.html.contains("name=\"since\" value=\""))
        #expect((try await store.countJobs(in: [.cancelled])[.cancelled] ?? 0) == 0)

        let outcome = await dashboard.act(
            onSelection: [("verb", "cancel")] + filter, name: "alice", uid: nil, origin: "test")
        guard case .done(let location, _) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(location == "./?state=pending&since=1h&match=DISK%20full")
        let states = try await ids.asyncMap { try await store.job($0)?.job.state }
        #expect(states == [.cancelled, .cancelled, .pending, .pending])
        let action = try #require(try await store.actions(limit: 1, before: nil).first)
        #expect(action.changed == 2 && action.selection.match == "DISK full" && action.selection.createdSince != nil)
        try await store.close()
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
