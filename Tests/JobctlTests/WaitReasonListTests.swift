import Foundation
import JobStore
import Testing

/// `jobctl list --pending` says why each pending job waits (a WAITING
/// column, `wait_reason` in `--json`); `jobctl status` says it in full.
@Suite struct WaitReasonListTests {
    /// One job of each customer at a time.
    static let keyed = TestDefinitions.hello + "\nlimit: { per-key: 1, key: {json: .customer} }\n"

    @Test func listAndStatusSayWhyPendingJobsWait() async throws {
        let sandbox = try Sandbox(definitions: ["hello": TestDefinitions.hello, "keyed": Self.keyed])
        var ids: [Int64] = []
        for arguments in [
            ["submit", "keyed", "--input", #"{"customer": "acme"}"#],
            ["submit", "keyed", "--input", #"{"customer": "acme"}"#],
            ["submit", "hello", "--delay", "1h"],
        ] {
            let submitted = try await sandbox.jobctl(arguments)
            #expect(submitted.status == 0, "\(submitted)")
            ids.append(try #require(Int64(submitted.out.trimmingCharacters(in: .whitespacesAndNewlines))))
        }

        let list = try await sandbox.jobctl(["list", "--pending"])
        #expect(list.status == 0, "\(list)")
        let header = try #require(list.outLines.first)
        #expect(header.hasPrefix("ID  DEFINITION  STATE    WAITING ") && header.contains(" ATTEMPT "), "\(header)")
        func row(_ id: Int64) -> String {
            list.outLines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("\(id) ") } ?? ""
        }
        #expect(row(ids[0]).contains(" pending  ready "), "\(list.out)")
        #expect(row(ids[1]).contains(" pending  turn in key acme "), "\(list.out)")
        #expect(row(ids[2]).contains(" pending  delayed "), "\(list.out)")
        // A list of resolved jobs has no such column.
        let resolved = try await sandbox.jobctl(["list", "--resolved"])
        #expect(!resolved.out.contains("WAITING") && !resolved.stderr.contains("WAITING"))

        let json = try await sandbox.jobctl(["list", "--state", "pending", "--json"])
        let jobs = try #require(try json.json()["jobs"] as? [[String: Any]])
        let second = try #require(jobs.first { $0["id"] as? Int == Int(ids[1]) })
        let reason = try #require(second["wait_reason"] as? [String: Any])
        #expect(reason["code"] as? String == "turn")
        #expect(reason["text"] as? String == "waiting for its turn in key \"acme\": job \(ids[0]) comes first")

        let status = try await sandbox.jobctl(["status", String(ids[1])])
        let why = try #require(status.outLines.first { $0.hasPrefix("  why ") }, "\(status.out)")
        #expect(why.hasSuffix(" waiting for its turn in key \"acme\": job \(ids[0]) comes first"), "\(why)")
        let delayed = try await sandbox.jobctl(["status", String(ids[2]), "--json"])
        let later = try #require(try delayed.json()["wait_reason"] as? [String: Any])
        #expect(later["code"] as? String == "delayed")
        #expect((later["text"] as? String)?.hasPrefix("delayed until ") == true)
    }
}
