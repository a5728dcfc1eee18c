import Foundation
import JobStore
import JobStoreSQLite
import Testing

@testable import JobDashboard

/// The operators' forms and pages: every user string escaped, as on the other pages.
@Suite struct ActionPagesTests {
    /// Actions over an empty store of their own (the pages read the fixed source; counts read the store).
    static func withActions<T>(_ body: (DashboardActions) async throws -> T) async throws -> T {
        let folder = NSTemporaryDirectory() + "dashboard-actions-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try SQLiteJobStore(path: folder + "/jobs.sqlite")
        let result = try await body(try #require(DashboardActions(store)))
        try await store.close()
        return result
    }

    @Test func theJobPageShowsTheFormsOfItsStateWithEscapedValues() async throws {
        try await Self.withActions { actions in
            let job = makeJob(1, definition: Hostile.script, state: .rejected, error: Hostile.attribute)
            let source = FixedSource(jobs: [job], details: [1: JobDetail(job: job, stages: [])])
            let dashboard = Dashboard(source: source, actions: actions)
            let forms = ActionForms(csrf: Hostile.attribute)
            let page = await dashboard.jobPage(id: "1", forms: forms)
            #expect(page.html.contains("action=\"1/retry\"") && page.html.contains("action=\"1/delete\""))
            #expect(!page.html.contains("action=\"1/cancel\""))
            #expect(!page.html.lowercased().contains("<script") && !page.html.contains("onmouseover=\""))
            // Without forms (a read visitor), or without actions, no form at all.
            #expect(!(await dashboard.jobPage(id: "1")).html.contains("<form method=\"post\""))
            #expect(
                !(await Dashboard(source: source).jobPage(id: "1", forms: forms)).html.contains("<form method=\"post\"")
            )
        }
    }

    @Test(arguments: [Hostile.script, Hostile.attribute])
    func theConfirmationPageEscapesTheFilter(_ value: String) async throws {
        try await Self.withActions { actions in
            let dashboard = Dashboard(source: FixedSource(jobs: []), actions: actions)
            let page = await dashboard.confirmationPage(
                query: [("verb", "retry"), ("state", "rejected"), ("definition", value)], forms: ActionForms(csrf: "t"))
            #expect(page.status == .ok)
            #expect(page.html.contains("Retry 0 jobs?"))
            #expect(!page.html.lowercased().contains("<script") && !page.html.contains("onmouseover=\""))
            let list = await dashboard.jobsPage(query: [("definition", value)], forms: ActionForms(csrf: "t"))
            #expect(list.html.contains("Retry the selection"))
            #expect(!list.html.lowercased().contains("<script") && !list.html.contains("onmouseover=\""))
            let unfiltered = await dashboard.confirmationPage(query: [("verb", "retry")], forms: ActionForms(csrf: "t"))
            #expect(unfiltered.status == .badRequest)
        }
    }
}
