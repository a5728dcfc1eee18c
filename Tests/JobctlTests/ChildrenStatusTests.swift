import Foundation
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import Testing

/// `jobctl status` of a parent shows its children by state and the first
/// rejected ones; `jobctl list --parent` lists them in item order.
@Suite struct ChildrenStatusTests {
    /// A parent waiting on three children, of which one fulfilled and one rejected.
    static func seedFamily(_ sandbox: Sandbox) async throws -> (parent: Int64, children: [Int64]) {
        try await sandbox.withStore { store in
            let plan = [StagePlan(name: "work", kind: "then")]
            let parent = try await store.submit(NewJob(definition: "hello", stages: plan)).id
            let claimed = try #require(
                try await store.claim(pool: "default", owner: "t", limit: 1, leaseDuration: .seconds(30)).first)
            let children = ["a", "b", "c"].map {
                NewJob(definition: "hello", pool: "kids", input: Data($0.utf8), stages: plan)
            }
            _ = try await store.joinChildren(
                ChildJoin(
                    lease: claimed.lease, position: 0, attempt: 1, parentAttempt: 1, failFast: false,
                    children: children))
            let kids = try await store.claim(pool: "kids", owner: "t", limit: 2, leaseDuration: .seconds(30))
            try await store.finish(
                JobFinish(lease: kids[0].lease, outcome: .fulfilled(Data("A".utf8)), parentID: parent))
            try await store.finish(JobFinish(lease: kids[1].lease, outcome: .rejected("no b today"), parentID: parent))
            return (parent, try await store.children(of: parent, limit: 10).map(\.id))
        }
    }

    @Test func statusOfAParentCountsItsChildrenAndShowsTheRejected() async throws {
        let sandbox = try Sandbox()
        let (parent, children) = try await Self.seedFamily(sandbox)
        let result = try await sandbox.jobctl(["status", String(parent)])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.out.contains("why       waiting for 1 child job of stage 1 to end (jobctl list --parent \(parent))"),
            "\(result.out)")
        #expect(result.out.contains("children  3: 1 pending, 1 fulfilled, 1 rejected"), "\(result.out)")
        #expect(result.out.contains("rejected: job \(children[1]) (item 1, hello): no b today"), "\(result.out)")
        let json = try await sandbox.jobctl(["status", String(parent), "--json"]).json()
        let summary = try #require(json["children"] as? [String: Any])
        #expect(summary["total"] as? Int == 3)
        #expect((summary["by_state"] as? [String: Int]) == ["pending": 1, "fulfilled": 1, "rejected": 1])
        let child = try await sandbox.jobctl(["status", String(children[2])])
        #expect(child.out.contains("parent   job \(parent), stage 1, item 2"), "\(child.out)")
    }

    @Test func listParentListsTheChildrenInItemOrder() async throws {
        let sandbox = try Sandbox()
        let (parent, children) = try await Self.seedFamily(sandbox)
        let all = try await sandbox.jobctl(["list", "--parent", String(parent), "--json"]).json()
        let ids = (all["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
        #expect(ids == children.map { Int($0) })
        let rejected = try await sandbox.jobctl(["list", "--parent", String(parent), "--state", "rejected", "--json"])
            .json()
        let items = (rejected["jobs"] as? [[String: Any]])?.compactMap { $0["item_index"] as? Int }
        #expect(items == [1])
    }
}
