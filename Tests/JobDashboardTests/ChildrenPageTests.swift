import Foundation
import Testing

@testable import JobDashboard
@testable import JobStore

/// The job page of a parent lists its children, linked; a child's page links its parent.
@Suite struct ChildrenPageTests {
    @Test func aParentListsItsChildrenAndAChildLinksItsParent() async throws {
        var parent = makeJob(1, definition: "gallery", state: .pending, ranFor: nil)
        parent.waitingOn = 1
        let children = (0..<3).map { index -> Job in
            var child = makeJob(
                Int64(10 + index), definition: "resize", state: [.fulfilled, .rejected, .running][index],
                error: index == 1 ? "<b>no</b> such image" : nil)
            child.parentID = 1
            child.parentStage = 0
            child.itemIndex = index
            return child
        }
        let source = FixedSource(
            details: [
                1: JobDetail(job: parent, stages: [makeStage(0, name: "resize", kind: "each", state: .running)]),
                11: JobDetail(job: children[1], stages: [makeStage(0, state: .rejected)]),
            ],
            children: [1: children])
        let dashboard = Dashboard(source: source)
        let page = await dashboard.jobPage(id: "1", query: [])
        #expect(page.status == .ok)
        #expect(page.html.contains("<h2>Children</h2>"))
        for child in children { #expect(page.html.contains("href=\"jobs/\(child.id)\""), "child \(child.id)") }
        #expect(page.html.contains("&lt;b&gt;no&lt;/b&gt; such image"))
        #expect(page.html.contains("for 1 jobs"))
        let childPage = await dashboard.jobPage(id: "11", query: [])
        #expect(childPage.html.contains("<a href=\"jobs/1\">job 1</a>, stage 0, item 1"), "\(childPage.html)")
        #expect(!childPage.html.contains("<h2>Children</h2>"))
    }
}
